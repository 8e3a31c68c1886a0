# from: speechbrain 1.1.2, speechbrain/utils/edit_distance.py:91
# pattern: item assignment on a `collections.Counter` (an argument whose default is one), after
#          `stats + other_counter`: no tensor at all
# expect: none
# torch: ok
import collections


def accumulate(refs, hyps, stats=collections.Counter()):
    updated = stats + batch_stats(refs, hyps)
    if updated["num_ref_tokens"] == 0:
        updated["WER"] = float("nan")
    else:
        num_edits = sum([updated["insertions"], updated["deletions"], updated["substitutions"]])
        updated["WER"] = 100.0 * num_edits / updated["num_ref_tokens"]
    return updated


def batch_stats(refs, hyps):
    stats = collections.Counter()
    for ref, hyp in zip(refs, hyps):
        edits = count_edits(ref, hyp)
        stats += edits
        stats["num_ref_tokens"] += len(ref)
    return stats


# --- driver: run under torch, not analysed ---
def count_edits(ref, hyp):
    return collections.Counter(substitutions=sum(a != b for a, b in zip(ref, hyp)),
                               deletions=max(len(ref) - len(hyp), 0), insertions=max(len(hyp) - len(ref), 0))


stats = accumulate([[1, 2, 3]], [[1, 2, 4]])
if abs(stats["WER"] - 100.0 / 3) > 1e-9:
    print("MISMATCH", stats)

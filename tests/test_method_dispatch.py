"""`Tensors._call_tensor_method` skips its chain of special methods for any name outside
`_BEFORE_GENERAL` (engine/domain/tensors.py). A name the chain tests but the guard set lacks would
silently take the general op-table path instead: every name the guarded block compares `name`
with must be in the set."""
import ast
import inspect
import textwrap

from gradwarden.engine.domain import tensors


def _names_tested(block: ast.AST):
    for node in ast.walk(block):
        if not (isinstance(node, ast.Compare) and isinstance(node.left, ast.Name) and node.left.id == "name"):
            continue
        for op, right in zip(node.ops, node.comparators):
            if isinstance(op, (ast.Eq, ast.In)):
                if isinstance(right, ast.Constant):
                    yield right.value
                elif isinstance(right, (ast.Tuple, ast.Set, ast.List)):
                    yield from (e.value for e in right.elts if isinstance(e, ast.Constant))
                elif isinstance(right, ast.Name):
                    yield from getattr(tensors, right.id)


def test_every_name_the_special_chain_tests_is_in_its_guard():
    src = textwrap.dedent(inspect.getsource(tensors.Tensors._call_tensor_method))
    fn = ast.parse(src).body[0]
    guards = [n for n in ast.walk(fn) if isinstance(n, ast.If) and isinstance(n.test, ast.Compare)
              and isinstance(n.test.comparators[0], ast.Name) and n.test.comparators[0].id == "_BEFORE_GENERAL"]
    assert len(guards) == 1
    tested = set(_names_tested(ast.Module(body=guards[0].body, type_ignores=[])))
    assert {"backward", "detach", "clone", "contiguous", "new_zeros", "split", "long"} <= tested  # the walk sees them
    assert tested <= tensors._BEFORE_GENERAL, sorted(tested - tensors._BEFORE_GENERAL)


def test_a_general_method_is_not_in_the_guard():
    # the point of the guard: the most frequent methods go straight to the op table
    assert not {"view", "sum", "permute", "unsqueeze", "mean", "reshape", "add_"} & tensors._BEFORE_GENERAL

;;; eglot-crossfile-test.el --- Emacs + Eglot: a finding made through another file of the project  -*- lexical-binding: t -*-
;; GW_CMD=... GW_RESULT=result.json emacs --batch -l eglot-crossfile-test.el utils/sampling.py
;; The workspace holds train.py, which calls utils/sampling.py's helper: the hazard is the write
;; in the helper (line 4), found by the analysis of train.py, and must show in the helper.
;; The server is configured as docs/editors.md says (eglot-server-programs).
;; Exit status 0 = every check passed, 1 = a check failed (details in GW_RESULT).
(load (expand-file-name "eglot-common.el" (file-name-directory load-file-name)) nil t)

;; ---- the helper opened alone: its diagnostic comes from the analysis of train.py
(condition-case err
    (progn
      (find-file gw-file)
      (python-mode)
      (apply #'eglot--connect (eglot--guess-contact))
      (gw-check "server connected" (gw-wait (lambda () (eglot-current-server)) gw-wait-limit))
      (flymake-start)
      (gw-wait (lambda () (gw-diags)) gw-wait-limit)
      (let ((d (car (gw-diags))))
        (gw-check "cross-file diagnostic in the helper"
                  (and d (= (length (gw-diags)) 1)
                       (= (line-number-at-pos (flymake-diagnostic-beg d)) 4)
                       (memq (flymake-diagnostic-type d) '(:error eglot-error))
                       (string-match-p "GW306" (flymake-diagnostic-text d))
                       ;; related places folded in the text, each named by its file
                       (string-match-p "train.py line [0-9]+: called from here" (flymake-diagnostic-text d)))
                  (gw-diag-summary)))
      ;; the quick fix edits this file (the one that holds the write)
      (goto-char (point-min)) (forward-line 3)
      (let ((offered (gw-pick-action "before writing" "quickfix")))
        (gw-check "quick fix applied in the helper"
                  (gw-wait (lambda () (string-match-p "clone()" (buffer-string))) gw-wait-limit)
                  (list offered (buffer-string))))
      (gw-check "diagnostic cleared" (gw-wait (lambda () (null (gw-diags))) gw-wait-limit) (gw-diag-summary)))
  (error (gw-check "lisp error" nil err)))
(gw-finish)

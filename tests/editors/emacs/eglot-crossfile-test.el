;;; eglot-crossfile-test.el --- Emacs + Eglot: a finding made through another file of the project  -*- lexical-binding: t -*-
;; GW_CMD=... GW_RESULT=result.json emacs --batch -l eglot-crossfile-test.el utils/sampling.py
;; The workspace holds train.py, which calls utils/sampling.py's helper: the hazard is the write
;; in the helper (line 4), found by the analysis of train.py, and must show in the helper.
;; The server is configured as docs/editors.md says (eglot-server-programs).
;; Exit status 0 = every check passed, 1 = a check failed (details in GW_RESULT).
(require 'package)
(package-initialize)            ; Debian's elpa-eglot lives in /usr/share/emacs/site-lisp/elpa
(require 'eglot)
(require 'flymake)
(require 'json)
(require 'cl-lib)

(defvar gw-checks nil)
(defvar gw-failed nil)
(defvar gw-result (or (getenv "GW_RESULT") "result.json"))
(defvar gw-file (car command-line-args-left))
(setq command-line-args-left nil)

(defun gw-check (name ok &optional detail)
  (push (list (cons 'name name) (cons 'ok (if ok t :json-false)) (cons 'detail (format "%S" detail))) gw-checks)
  (unless ok (setq gw-failed t)))

(defun gw-run-idle-timers ()
  "Emacs is never idle in --batch: eglot's didChange and flymake's re-check live on idle
timers, so fire them by hand, as if the user had paused typing."
  (dolist (timer (copy-sequence timer-idle-list)) (timer-event-handler timer)))

;; Waits are for events; their limit only stops a hung run (never a speed check).
(defvar gw-wait-limit (string-to-number (or (getenv "GW_WAIT_S") "120")))
(defvar gw-watchdog (string-to-number (or (getenv "GW_WATCHDOG_S") "900")))

(defun gw-wait (pred &optional timeout)
  (let ((deadline (+ (float-time) (or timeout gw-wait-limit))) (v nil))
    (while (and (not (setq v (funcall pred))) (< (float-time) deadline))
      (gw-run-idle-timers)
      (accept-process-output nil 0.05))
    v))

(defun gw-diags ()
  (cl-remove-if-not (lambda (d) (string-match-p "GW[0-9]+" (flymake-diagnostic-text d))) (flymake-diagnostics)))

(defun gw-diag-summary ()
  (mapcar (lambda (d) (list (line-number-at-pos (flymake-diagnostic-beg d)) (flymake-diagnostic-type d)
                            (flymake-diagnostic-text d)))
          (gw-diags)))

(defun gw-line (n)
  (save-excursion (goto-char (point-min)) (forward-line (1- n))
                  (buffer-substring-no-properties (line-beginning-position) (line-end-position))))

(defun gw-pick-action (regexp kind)
  "Run eglot's own code-action command, picking the action whose title matches REGEXP."
  (let ((offered nil))
    (cl-letf (((symbol-function 'completing-read)
               (lambda (_prompt collection &rest _)
                 (setq offered (mapcar #'car collection))
                 (or (cl-find-if (lambda (title) (string-match-p regexp title)) offered)
                     (error "no action matching %s in %S" regexp offered)))))
      (let ((last-nonmenu-event 13))      ; not a mouse event: eglot prompts instead of a popup menu
        (eglot-code-actions (line-beginning-position) (line-end-position) kind t)))
    offered))

(defun gw-finish ()
  (ignore-errors (eglot-shutdown (eglot-current-server)))
  (with-temp-file gw-result
    (insert (json-encode `((emacs . ,emacs-version)
                           (ok . ,(if gw-failed :json-false t))
                           (checks . ,(vconcat (reverse gw-checks)))))))
  (kill-emacs (if gw-failed 1 0)))

;; ---- the documented configuration (docs/editors.md, Emacs + Eglot)
(setq eglot-server-programs
      `((python-mode . ,(append (json-read-from-string (getenv "GW_CMD")) nil)))
      eglot-confirm-server-initiated-edits nil
      eglot-send-changes-idle-time 0.1
      eglot-sync-connect t
      make-backup-files nil
      create-lockfiles nil)

(run-at-time gw-watchdog nil (lambda () (gw-check "watchdog" nil (format "hung: no end after %ss" gw-watchdog)) (gw-finish)))

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

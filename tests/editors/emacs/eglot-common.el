;;; eglot-common.el --- what the Emacs + Eglot drivers share: the checks, waits and result file, and the documented configuration  -*- lexical-binding: t -*-
;; Loaded by eglot-test.el and eglot-crossfile-test.el (beside it); the file to open is the first
;; argument after the driver on the command line.
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

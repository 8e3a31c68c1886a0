;;; lsp-mode-test.el --- batch Emacs + lsp-mode end-to-end driver for `gradwarden serve'  -*- lexical-binding: t -*-
;; GW_CMD='["python","-m","gradwarden","serve"]' GW_RESULT=result.json emacs --batch -l lsp-mode-test.el sample.py
;; The client is registered as docs/editors.md says (lsp-register-client, an add-on server).
;; Exit status 0 = every check passed, 1 = a check failed (details in GW_RESULT).
(require 'package)
(package-initialize)
(require 'cl-lib)
(require 'json)
(require 'flymake)
(defvar gw-tmp (or (getenv "TMPDIR") temporary-file-directory))
(setq lsp-session-file (expand-file-name "lsp-session" gw-tmp)
      lsp-server-install-dir (expand-file-name "lsp-servers" gw-tmp)
      lsp-client-packages nil          ; only our client, not the 100+ bundled ones
      lsp-auto-guess-root nil
      lsp-restart 'ignore
      lsp-enable-file-watchers nil
      lsp-diagnostics-provider :flymake
      lsp-modeline-code-actions-enable nil
      lsp-headerline-breadcrumb-enable nil
      lsp-enable-snippet nil
      lsp-idle-delay 0.1
      lsp-keep-workspace-alive nil
      make-backup-files nil create-lockfiles nil)
(require 'lsp-mode)

;; ---- the documented registration (docs/editors.md, Emacs + lsp-mode)
(lsp-register-client
 (make-lsp-client
  :new-connection (lsp-stdio-connection (append (json-read-from-string (getenv "GW_CMD")) nil))
  :activation-fn (lsp-activate-on "python")
  :add-on? t
  :server-id 'gradwarden
  :initialization-options (lambda () '(:settings (:lintOn "type")))))
(setq lsp-enabled-clients '(gradwarden))

(defvar gw-checks nil)
(defvar gw-failed nil)
(defun gw-check (name ok &optional detail)
  (push `((name . ,name) (ok . ,(if ok t :json-false)) (detail . ,(format "%S" detail))) gw-checks)
  (unless ok (setq gw-failed t)))
(defun gw-run-idle-timers ()   ; Emacs is never idle in --batch: fire idle timers by hand
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
(defun gw-diags () (gethash (buffer-file-name) (lsp-diagnostics t)))
(defun gw-codes () (mapcar (lambda (d) (lsp:diagnostic-code? d)) (gw-diags)))
(defun gw-line (n)
  (save-excursion (goto-char (point-min)) (forward-line (1- n))
                  (buffer-substring-no-properties (line-beginning-position) (line-end-position))))
(defun gw-apply (regexp)
  (let* ((actions (lsp-code-actions-at-point))
         (a (cl-find-if (lambda (x) (string-match-p regexp (lsp:code-action-title x))) actions)))
    (when a (lsp-execute-code-action a))
    (mapcar #'lsp:code-action-title actions)))

(run-at-time gw-watchdog nil (lambda () (gw-check "watchdog" nil (format "hung: no end after %ss" gw-watchdog))
                       (with-temp-file (or (getenv "GW_RESULT") "result.json")
                         (insert (json-encode `((ok . :json-false) (checks . ,(vconcat (reverse gw-checks)))))))
                       (kill-emacs 1)))

(let ((file (car command-line-args-left)))
  (setq command-line-args-left nil)
  (condition-case err
      (progn
        (find-file file)
        (python-mode)
        (lsp-workspace-folders-add default-directory) ; no interactive "import project root?" prompt
        (lsp)
        (gw-check "server initialized"
                  (gw-wait (lambda () (and (lsp-workspaces)
                                           (eq (lsp--workspace-status (car (lsp-workspaces))) 'initialized))) gw-wait-limit))
        ;; 1. diagnostics in lsp-mode's store and in flymake
        (gw-wait (lambda () (equal (gw-codes) '("GW201"))) gw-wait-limit)
        (let ((d (car (gw-diags))))
          (gw-check "diagnostic received"
                    (and d (equal (gw-codes) '("GW201"))
                         (= (lsp:diagnostic-severity? d) 1)
                         (= (lsp:position-line (lsp:range-start (lsp:diagnostic-range d))) 4))
                    (mapcar #'lsp:diagnostic-message (gw-diags))))
        (gw-check "flymake shows it" (gw-wait (lambda () (= (length (flymake-diagnostics)) 1)) gw-wait-limit)
                  (mapcar #'flymake-diagnostic-text (flymake-diagnostics)))
        ;; 2. hover on `y' in `y += 1'
        (goto-char (point-min)) (forward-line 4)
        (let* ((h (lsp-request "textDocument/hover" (lsp--text-document-position-params)))
               (val (and h (lsp:markup-content-value (lsp:hover-contents h)))))
          (gw-check "hover timeline" (and val (string-match-p "sigmoid" val) (string-match-p "version to 1" val)
                                          (string-match-p "finds version 1" val))
                    val))
        ;; 3. the out-of-place quick fix, applied by lsp-mode
        (goto-char (point-min)) (forward-line 4)
        (let ((offered (gw-apply "out of place")))
          (gw-check "quick fix applied" (gw-wait (lambda () (equal (gw-line 5) "y = y + 1")) gw-wait-limit)
                    (list offered (gw-line 5))))
        (gw-check "diagnostic cleared" (gw-wait (lambda () (null (gw-diags))) gw-wait-limit) (gw-codes))
        ;; 4. typing the hazard again, then the noqa action
        (goto-char (point-min)) (forward-line 4)
        (delete-region (line-beginning-position) (line-end-position))
        (insert "y += 1")
        (gw-check "diagnostic after typing" (gw-wait (lambda () (equal (gw-codes) '("GW201"))) gw-wait-limit) (gw-codes))
        (goto-char (point-min)) (forward-line 4)
        (let ((offered (gw-apply "Disable GW201")))
          (gw-check "noqa applied" (gw-wait (lambda () (equal (gw-line 5) "y += 1  # noqa: GW201")) gw-wait-limit)
                    (list offered (gw-line 5))))
        (gw-check "silenced" (gw-wait (lambda () (null (gw-diags))) gw-wait-limit) (gw-codes)))
    (error (gw-check "lisp error" nil err))))
(ignore-errors (lsp-workspace-shutdown (car (lsp-workspaces))))
(with-temp-file (or (getenv "GW_RESULT") "result.json")
  (insert (json-encode `((emacs . ,emacs-version)
                         (ok . ,(if gw-failed :json-false t)) (checks . ,(vconcat (reverse gw-checks)))))))
(kill-emacs (if gw-failed 1 0))

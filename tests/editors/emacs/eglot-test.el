;;; eglot-test.el --- batch Emacs + Eglot end-to-end driver for `gradwarden serve'  -*- lexical-binding: t -*-
;; GW_CMD='["python","-m","gradwarden","serve"]' GW_RESULT=result.json emacs --batch -l eglot-test.el sample.py
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

(condition-case err
    (progn
      (find-file gw-file)
      (python-mode)
      ;; eglot-ensure waits for post-command-hook, which never runs in --batch: connect directly.
      (apply #'eglot--connect (eglot--guess-contact))
      (gw-check "server connected" (gw-wait (lambda () (eglot-current-server)) gw-wait-limit)
                (ignore-errors (eglot--server-info (eglot-current-server))))
      (flymake-start)
      ;; 1. diagnostics, as flymake shows them (pushed; related information folded in the text)
      (gw-wait (lambda () (= (length (gw-diags)) 1)) gw-wait-limit)
      (let ((d (car (gw-diags))))
        (gw-check "diagnostic received"
                  (and d (= (length (gw-diags)) 1)
                       (= (line-number-at-pos (flymake-diagnostic-beg d)) 5)
                       (memq (flymake-diagnostic-type d) '(:error eglot-error))
                       (string-match-p "GW201" (flymake-diagnostic-text d))
                       (string-match-p "line 4:" (flymake-diagnostic-text d)))
                  (gw-diag-summary)))
      ;; 2. hover: markdown when markdown-mode is installed (eglot then accepts it), else plain text
      (goto-char (point-min)) (forward-line 4)
      (let* ((markdown (and (require 'markdown-mode nil t) t))
             (h (jsonrpc-request (eglot-current-server) :textDocument/hover (eglot--TextDocumentPositionParams)))
             (contents (plist-get h :contents))
             (val (plist-get contents :value)))
        (gw-check "hover timeline"
                  (and val (string-match-p "sigmoid" val) (string-match-p "version to 1" val)
                       (string-match-p "finds version 1" val)
                       (equal (plist-get contents :kind) (if markdown "markdown" "plaintext"))
                       (eq markdown (and (string-match-p "\\*\\*" val) t)))
                  (list markdown val)))
      (let (eldoc-text)
        (eglot-hover-eldoc-function (lambda (info &rest _) (setq eldoc-text info)))
        (gw-wait (lambda () eldoc-text) gw-wait-limit)
        (gw-check "hover via eldoc" (and eldoc-text (string-match-p "version counter" eldoc-text)) eldoc-text))
      ;; 3. the out-of-place quick fix through eglot-code-actions
      (goto-char (point-min)) (forward-line 4)
      (let ((offered (gw-pick-action "out of place" "quickfix")))
        (gw-check "quick fix applied" (gw-wait (lambda () (equal (gw-line 5) "y = y + 1")) gw-wait-limit)
                  (list offered (gw-line 5))))
      (gw-check "diagnostic cleared" (gw-wait (lambda () (null (gw-diags))) gw-wait-limit) (gw-diag-summary))
      ;; 4. typing a hazard again, then the noqa action
      (goto-char (point-min)) (forward-line 4)
      (delete-region (line-beginning-position) (line-end-position))
      (insert "y += 1")
      (gw-check "diagnostic after typing" (gw-wait (lambda () (= (length (gw-diags)) 1)) gw-wait-limit) (gw-diag-summary))
      (goto-char (point-min)) (forward-line 4)
      (let ((offered (gw-pick-action "Disable GW201" "quickfix")))
        (gw-check "noqa applied" (gw-wait (lambda () (equal (gw-line 5) "y += 1  # noqa: GW201")) gw-wait-limit)
                  (list offered (gw-line 5))))
      (gw-check "silenced" (gw-wait (lambda () (null (gw-diags))) gw-wait-limit) (gw-diag-summary))
      ;; 5. fix all (source.fixAll.gradwarden)
      (goto-char (point-min)) (forward-line 4)
      (delete-region (line-beginning-position) (line-end-position))
      (insert "y += 1")
      (gw-wait (lambda () (= (length (gw-diags)) 1)) gw-wait-limit)
      (goto-char (point-min))
      (let ((offered (gw-pick-action "Fix all" "source.fixAll.gradwarden")))
        (gw-check "fix all applied" (gw-wait (lambda () (null (gw-diags))) gw-wait-limit) (list offered (buffer-string))))
      ;; 6. half-typed code keeps the last good picture
      (goto-char (point-min)) (forward-line 4)
      (delete-region (line-beginning-position) (line-end-position))
      (insert "y += 1")
      (gw-wait (lambda () (= (length (gw-diags)) 1)) gw-wait-limit)
      (goto-char (point-max))
      (insert "z = torch.exp(\n")
      (gw-check "parse error keeps the last good diagnostic"
                (gw-wait (lambda () (let ((texts (mapcar #'flymake-diagnostic-text (gw-diags))))
                                      (and (= (length texts) 2)
                                           (cl-some (lambda (s) (string-match-p "GW001" s)) texts)
                                           (cl-some (lambda (s) (string-match-p "GW201" s)) texts))))
                         gw-wait-limit)
                (gw-diag-summary)))
  (error (gw-check "lisp error" nil err)))
(gw-finish)

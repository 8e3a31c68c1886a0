// Names shared with `gradwarden serve` (server/gradwarden/lsp) and the diagnostics it publishes.

export const SERVER_NAME = 'gradwarden';
/** `source` of the diagnostics published by the server (static, and runtime-confirmed ones). */
export const DIAGNOSTIC_SOURCE = 'gradwarden';
/** workspace/executeCommand names. */
export const CMD_DEBUG_RUN = 'gradwarden.debugRun';
export const CMD_CHECK_WORKSPACE = 'gradwarden.checkWorkspace';
/** Writes the timeline picture (HTML) of the finding at a position; returns its path (and the page). */
export const CMD_SHOW_TIMELINE = 'gradwarden.showTimeline';
/** The code action kind of "fix all gradwarden issues" (editor.codeActionsOnSave). */
export const FIX_ALL_KIND = 'source.fixAll.gradwarden';
/** Code of the "file does not parse" diagnostic: not an autograd hazard, no debug run offered. */
export const PARSE_ERROR_CODE = 'GW001';

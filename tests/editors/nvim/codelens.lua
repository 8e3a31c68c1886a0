-- Headless Neovim (0.11+): the code lens "Confirm with a debug run" and the timeline command,
-- with the server configured as docs/editors.md says.
--   GW_CMD='["/path/python","-m","gradwarden","serve"]' GW_RESULT=result.json \
--   nvim --headless -u tests/editors/nvim/codelens.lua sample.py
-- 1. the lens is displayed above the diagnostic (vim.lsp.codelens.refresh, its extmark);
-- 2. vim.lsp.codelens.run() on that line runs it (gradwarden.debugRun), and the lens then says
--    what the run found;
-- 3. the diagnostic is marked "[confirmed]" in place: Neovim 0.11 pulls diagnostics again only
--    on an edit or a reload (it has no workspace/diagnostic/refresh), so `:edit` shows it;
-- 4. gradwarden.showTimeline (client:exec_cmd, as docs/editors.md shows) writes the picture.
-- Exit status 0 = every check passed, 1 = a check failed (details in GW_RESULT).
vim.opt.swapfile = false
vim.opt.shadafile = "NONE"

local result_path = vim.env.GW_RESULT or "result.json"
local cmd = vim.json.decode(vim.env.GW_CMD)
local results = { nvim = tostring(vim.version()), checks = {} }
local failed = false
local WAIT = tonumber(vim.env.GW_WAIT_MS or "120000")  -- a hang guard, never a speed check
local WATCHDOG = tonumber(vim.env.GW_WATCHDOG_MS or "900000")

local function check(name, cond, detail)
  table.insert(results.checks, { name = name, ok = cond and true or false, detail = vim.inspect(detail) })
  if not cond then
    failed = true
    if vim.env.GW_STOP_ON_FAIL then error("stop: " .. name, 0) end
  end
end

local function finish()
  results.ok = not failed
  local f = assert(io.open(result_path, "w"))
  f:write(vim.json.encode(results))
  f:close()
  for _, c in pairs(vim.lsp.get_clients()) do c:stop() end
  vim.wait(3000, function() return #vim.lsp.get_clients() == 0 end, 50)
  vim.cmd(failed and "cquit" or "qall!")
end

vim.defer_fn(function() check("watchdog", false, "hung: no end after " .. WATCHDOG .. " ms"); finish() end, WATCHDOG)

-- the documented configuration (docs/editors.md, Neovim), with the interpreter of the debug run
vim.lsp.config("gradwarden", {
  cmd = cmd,
  filetypes = { "python" },
  root_markers = { "pyproject.toml", ".git" },
  init_options = { settings = { lintOn = "type", interpreter = vim.env.GW_PYTHON } },
})
vim.lsp.enable("gradwarden")

local function gw_diags(bufnr)
  return vim.tbl_filter(function(d) return d.source and d.source:find("^gradwarden") end, vim.diagnostic.get(bufnr))
end

local function lens_titles(bufnr)
  local titles = {}
  for _, lens in ipairs(vim.lsp.codelens.get(bufnr)) do
    if lens.command then titles[#titles + 1] = lens.command.title end
  end
  return titles
end

local function shown_lens_text(bufnr, client)
  -- what Neovim displays: the virtual text of its codelens namespace
  local ns = vim.lsp.codelens.__namespaces[client.id]
  local text = {}
  for _, m in ipairs(vim.api.nvim_buf_get_extmarks(bufnr, ns, 0, -1, { details = true })) do
    for _, chunk in ipairs(m[4].virt_text or {}) do text[#text + 1] = chunk[1] end
    text[#text + 1] = "@" .. m[2]
  end
  return table.concat(text, " ")
end

local function run()
  local ok, err = pcall(function()
    local bufnr = vim.api.nvim_get_current_buf()
    local attached = vim.wait(WAIT, function() return #vim.lsp.get_clients({ bufnr = bufnr, name = "gradwarden" }) > 0 end, 50)
    check("client attached", attached, vim.tbl_map(function(c) return c.name end, vim.lsp.get_clients()))
    local client = vim.lsp.get_clients({ bufnr = bufnr, name = "gradwarden" })[1]
    results.lens_provider = client and client.server_capabilities.codeLensProvider ~= nil
    check("server offers code lenses", results.lens_provider, client and client.server_capabilities)

    local got = vim.wait(WAIT, function() return #gw_diags(bufnr) == 1 end, 50)
    local d = gw_diags(bufnr)[1]
    check("diagnostic received", got and d and d.code == "GW201", gw_diags(bufnr))

    -- 1. the lens, displayed above the diagnostic's line
    vim.lsp.codelens.refresh({ bufnr = bufnr })
    local seen = vim.wait(WAIT, function()
      local t = lens_titles(bufnr)
      return #t == 1 and t[1] == "Confirm with a debug run (1 finding)"
    end, 100)
    check("code lens offered", seen, lens_titles(bufnr))
    local lens = vim.lsp.codelens.get(bufnr)[1]
    check("code lens on the diagnostic's line", lens and d and lens.range.start.line == d.lnum, { lens = lens, diag = d })
    local shown = vim.wait(WAIT, function() return shown_lens_text(bufnr, client):find("Confirm with a debug run", 1, true) ~= nil end, 100)
    check("code lens displayed", shown, shown_lens_text(bufnr, client))

    -- 2. run it through the UI: cursor on the lens' line, vim.lsp.codelens.run()
    vim.api.nvim_win_set_cursor(0, { lens.range.start.line + 1, 0 })
    vim.lsp.codelens.run()
    local verdict = vim.wait(WAIT, function()
      local t = lens_titles(bufnr)
      return #t == 1 and t[1]:find("^Debug run: 1 confirmed") ~= nil
    end, 200)
    check("the lens says what the run found", verdict, lens_titles(bufnr))

    -- 3. the diagnostic marked in place (after the re-pull an edit or :edit makes)
    vim.cmd("edit")
    local marked = vim.wait(WAIT, function()
      local ds = gw_diags(bufnr)
      return #ds == 1 and ds[1].code == "GW201" and ds[1].message:find("^%[confirmed%] ") ~= nil
    end, 100)
    check("diagnostic marked [confirmed]", marked, gw_diags(bufnr))
    local md = gw_diags(bufnr)[1]
    check("marked where it was", md and d and md.lnum == d.lnum and md.col == d.col, { before = d, after = md })

    -- 4. the timeline picture, written by the server for the finding under the cursor
    local answer
    client:exec_cmd({ title = "timeline", command = "gradwarden.showTimeline",
                      arguments = { { uri = vim.uri_from_bufnr(bufnr), position = { line = d.lnum, character = d.col } } } },
                    { bufnr = bufnr }, function(e, res) answer = { err = e, res = res } end)
    vim.wait(WAIT, function() return answer ~= nil end, 50)
    local path = answer and answer.res and answer.res.path
    local html = path and vim.fn.filereadable(path) == 1 and table.concat(vim.fn.readfile(path), "\n") or ""
    check("timeline written", path and html:find("<svg", 1, true) and html:find("GW201", 1, true)
      and answer.res.findings == 1, { answer = answer, size = #html })
    results.timeline_path = path
  end)
  if not ok then
    table.insert(results.checks, { name = "lua error or stop", ok = false, detail = tostring(err) })
    failed = true
  end
  finish()
end

vim.api.nvim_create_autocmd("VimEnter", { once = true, callback = function() vim.schedule(run) end })

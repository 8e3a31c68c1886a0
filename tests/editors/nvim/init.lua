-- Headless Neovim (0.11+) end-to-end driver for `gradwarden serve`.
--   GW_CMD='["/path/python","-m","gradwarden","serve"]' GW_RESULT=result.json \
--   nvim --headless -u tests/editors/nvim/init.lua sample.py
-- The server is configured exactly as docs/editors.md says (vim.lsp.config + vim.lsp.enable).
-- Exit status 0 = every check passed, 1 = a check failed (details in GW_RESULT).
vim.opt.swapfile = false
vim.opt.shadafile = "NONE"

local result_path = vim.env.GW_RESULT or "result.json"
local cmd = vim.json.decode(vim.env.GW_CMD)
local results = { nvim = tostring(vim.version()), checks = {} }
local failed = false

local finish

-- Waits are for events (attached, diagnostics shown, text changed); their limits only stop a hung
-- run, never measure speed (a busy CI machine may take many seconds per step).
local WAIT = tonumber(vim.env.GW_WAIT_MS or "120000")
local WATCHDOG = tonumber(vim.env.GW_WATCHDOG_MS or "900000")

local function check(name, cond, detail)
  table.insert(results.checks, { name = name, ok = cond and true or false, detail = vim.inspect(detail) })
  if not cond then
    failed = true
    if vim.env.GW_STOP_ON_FAIL then error("stop: " .. name, 0) end
  end
end

finish = function()
  results.ok = not failed
  local f = assert(io.open(result_path, "w"))
  f:write(vim.json.encode(results))
  f:close()
  for _, c in pairs(vim.lsp.get_clients()) do c:stop() end
  vim.wait(3000, function() return #vim.lsp.get_clients() == 0 end, 50)
  vim.cmd(failed and "cquit" or "qall!")
end

vim.defer_fn(function() check("watchdog", false, "hung: no end after " .. WATCHDOG .. " ms"); finish() end, WATCHDOG)

-- ---- the documented configuration (docs/editors.md, Neovim)
vim.lsp.config("gradwarden", {
  cmd = cmd,
  filetypes = { "python" },
  root_markers = { "pyproject.toml", ".git" },
  init_options = { settings = { lintOn = "type" } },
})
vim.lsp.enable("gradwarden")

local function line(bufnr, n) return vim.api.nvim_buf_get_lines(bufnr, n - 1, n, false)[1] end

local function gw_diags(bufnr)
  return vim.tbl_filter(function(d) return d.source == "gradwarden" end, vim.diagnostic.get(bufnr))
end

local function pick_action(pattern)
  local offered = {}
  vim.ui.select = function(items, _, on_choice)
    for i, item in ipairs(items) do
      local action = item.action or item[2] or item
      offered[#offered + 1] = action.title
      if action.title and action.title:find(pattern) then return on_choice(item, i) end
    end
    on_choice(nil)
  end
  return offered
end

local function run()
  local ok, err = pcall(function()
    local bufnr = vim.api.nvim_get_current_buf()
    check("filetype", vim.bo[bufnr].filetype == "python", vim.bo[bufnr].filetype)
    local attached = vim.wait(WAIT, function() return #vim.lsp.get_clients({ bufnr = bufnr, name = "gradwarden" }) > 0 end, 50)
    check("client attached", attached, vim.tbl_map(function(c) return c.name end, vim.lsp.get_clients()))
    local client = vim.lsp.get_clients({ bufnr = bufnr, name = "gradwarden" })[1]
    results.server = client and client.server_info
    results.pull = client and client.server_capabilities.diagnosticProvider ~= nil
    results.encoding = client and client.offset_encoding

    -- 1. diagnostics (pulled, Neovim 0.11 asks for them)
    local got = vim.wait(WAIT, function() return #gw_diags(bufnr) == 1 end, 50)
    local d = gw_diags(bufnr)[1]
    check("diagnostic received", got and d and d.code == "GW201" and d.lnum == 4 and d.severity == vim.diagnostic.severity.ERROR,
      gw_diags(bufnr))
    check("related information", d and d.user_data and d.user_data.lsp and d.user_data.lsp.relatedInformation
      and #d.user_data.lsp.relatedInformation == 2, d and d.user_data)

    -- 2. hover on `y` in `y += 1`: the raw answer, then the real UI (a floating window)
    vim.api.nvim_win_set_cursor(0, { 5, 0 })
    local params = vim.lsp.util.make_position_params(0, client.offset_encoding)
    local resp = vim.lsp.buf_request_sync(bufnr, "textDocument/hover", params, WAIT) or {}
    local text
    for _, r in pairs(resp) do if r.result then text = r.result.contents.value end end
    check("hover timeline", text and text:find("sigmoid", 1, true) and text:find("version to 1", 1, true)
      and text:find("finds version 1", 1, true) and text:find("GW201", 1, true), text)
    vim.lsp.buf.hover()
    local float_text
    vim.wait(WAIT, function()
      for _, w in ipairs(vim.api.nvim_list_wins()) do
        if vim.api.nvim_win_get_config(w).relative ~= "" then
          float_text = table.concat(vim.api.nvim_buf_get_lines(vim.api.nvim_win_get_buf(w), 0, -1, false), "\n")
          return true
        end
      end
      return false
    end, 50)
    check("hover float", float_text and float_text:find("version", 1, true), float_text)
    for _, w in ipairs(vim.api.nvim_list_wins()) do
      if vim.api.nvim_win_get_config(w).relative ~= "" then vim.api.nvim_win_close(w, true) end
    end

    -- 3. the preferred quick fix through vim.lsp.buf.code_action()
    local offered = pick_action("out of place")
    vim.api.nvim_win_set_cursor(0, { 5, 0 })
    vim.lsp.buf.code_action()
    local applied = vim.wait(WAIT, function() return line(bufnr, 5) == "y = y + 1" end, 50)
    check("quick fix applied", applied, { offered = offered, line5 = line(bufnr, 5) })
    check("diagnostic cleared after the fix", vim.wait(WAIT, function() return #gw_diags(bufnr) == 0 end, 50), gw_diags(bufnr))

    -- 4. typing a new hazard (didChange), then silencing it with the noqa action
    vim.api.nvim_buf_set_lines(bufnr, 4, 5, false, { "y += 1" })
    check("diagnostic after typing", vim.wait(WAIT, function() return #gw_diags(bufnr) == 1 end, 50), gw_diags(bufnr))
    offered = pick_action("Disable GW201")
    vim.api.nvim_win_set_cursor(0, { 5, 0 })
    vim.lsp.buf.code_action()
    check("noqa applied", vim.wait(WAIT, function() return line(bufnr, 5) == "y += 1  # noqa: GW201" end, 50),
      { offered = offered, line5 = line(bufnr, 5) })
    check("silenced", vim.wait(WAIT, function() return #gw_diags(bufnr) == 0 end, 50), gw_diags(bufnr))

    -- 5. half-typed code keeps the picture: remove the noqa, break the syntax below
    vim.api.nvim_buf_set_lines(bufnr, 4, 5, false, { "y += 1" })
    check("diagnostic back", vim.wait(WAIT, function() return #gw_diags(bufnr) == 1 end, 50), gw_diags(bufnr))
    vim.api.nvim_buf_set_lines(bufnr, -1, -1, false, { "z = torch.exp(" })
    local kept = vim.wait(WAIT, function()
      local codes = {}
      for _, x in ipairs(gw_diags(bufnr)) do codes[#codes + 1] = x.code end
      table.sort(codes)
      return #codes == 2 and codes[1] == "GW001" and codes[2] == "GW201"
    end, 50)
    check("parse error keeps the last good diagnostic", kept, gw_diags(bufnr))
    results.final_buffer = vim.api.nvim_buf_get_lines(bufnr, 0, -1, false)
  end)
  if not ok then
    table.insert(results.checks, { name = "lua error or stop", ok = false, detail = tostring(err) })
    failed = true
  end
  finish()
end

vim.api.nvim_create_autocmd("VimEnter", { once = true, callback = function() vim.schedule(run) end })

-- Options of setup{}, their defaults, and what derives from them.

local M = {}

M.defaults = {
  -- Full server command. When nil it is built from `python` (or the `dsh-sidecar` script on PATH).
  cmd = nil,
  -- Interpreter that has dsh_sidecar installed; runs `<python> -m dsh_sidecar serve`.
  python = nil,
  -- Extra environment for the server process (e.g. { DSH_HOME = '...' }).
  cmd_env = nil,
  -- The `dsh` settings tree of the protocol (camelCase keys), sent as initializationOptions and
  -- again with workspace/didChangeConfiguration whenever it changes.
  settings = {},
  -- Files or directories that mark a project root. nil: the server's own
  -- instructions.projectRootMarkers setting, else { '.git' }, so both sides agree on the root.
  root_markers = nil,
  -- Filetypes to attach to; nil attaches every buffer backed by a file.
  filetypes = nil,
  -- Start the sidecar and attach buffers automatically (otherwise call api.attach(bufnr)).
  autostart = true,
  -- How long synchronous API calls (and commands) wait for an answer.
  timeout_ms = 10000,
  -- LSP client name; one client per project root carries it.
  name = 'dsh_sidecar',
}

-- nil until setup{} ran, so health can tell "not configured" from "configured with defaults".
M.options = nil

function M.set(opts)
  M.options = vim.tbl_deep_extend('force', vim.deepcopy(M.defaults), opts or {})
  return M.options
end

-- Options in force; commands and the API work with the defaults even before setup{}.
function M.get()
  return M.options or M.defaults
end

function M.cmd(opts)
  opts = opts or M.get()
  if opts.cmd then
    return opts.cmd
  end
  if opts.python then
    return { opts.python, '-m', 'dsh_sidecar', 'serve' }
  end
  if vim.fn.executable('dsh-sidecar') == 1 then
    return { 'dsh-sidecar', 'serve' }
  end
  return { 'python3', '-m', 'dsh_sidecar', 'serve' }
end

function M.root_markers(opts)
  opts = opts or M.get()
  if opts.root_markers then
    return opts.root_markers
  end
  local instructions = opts.settings and opts.settings.instructions
  return instructions and instructions.projectRootMarkers or { '.git' }
end

-- The settings tree as it goes on the wire: an empty Lua table would encode as a JSON array.
function M.wire_settings(opts)
  opts = opts or M.get()
  local settings = opts.settings or {}
  if next(settings) == nil then
    return vim.empty_dict()
  end
  return settings
end

return M

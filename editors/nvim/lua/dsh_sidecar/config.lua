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
  -- Resume each project's session from the last Neovim run (its id is kept under
  -- stdpath('data')/dsh_sidecar/sessions); false starts a new session every time.
  resume_sessions = true,
  -- Before Neovim 0.10, which maps K to LSP hover by itself: the key mapped buffer-locally to
  -- vim.lsp.buf.hover() in instruction files, unless the user already maps it or set a
  -- 'keywordprg' of their own. false leaves K alone.
  hover_key = 'K',
  -- LSP client name; one client per project root carries it.
  name = 'dsh_sidecar',
  -- Interpreter (3.11+) that :DshInstall makes its virtualenv with.
  install_python = 'python3',
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

-- The interpreter of the virtualenv :DshInstall makes.
function M.installed_python()
  return vim.fn.stdpath('data') .. '/dsh_sidecar/venv/bin/python'
end

-- Whether the command is the plugin's choice (so :DshInstall can fix it), not the user's.
function M.cmd_is_default(opts)
  opts = opts or M.get()
  return not opts.cmd and not opts.python
end

function M.cmd(opts)
  opts = opts or M.get()
  if opts.cmd then
    return opts.cmd
  end
  if opts.python then
    return { opts.python, '-m', 'dsh_sidecar', 'serve' }
  end
  local installed = M.installed_python()
  if vim.fn.executable(installed) == 1 then
    return { installed, '-m', 'dsh_sidecar', 'serve' }
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

-- The file names the server treats as instruction files (instructionFileCandidates and
-- localInstructionFileCandidates of the settings, else the server's defaults).
function M.instruction_file_names(opts)
  opts = opts or M.get()
  local instructions = opts.settings and opts.settings.instructions or {}
  local names = {}
  for _, name in ipairs(instructions.instructionFileCandidates or { 'AGENTS.md', 'CLAUDE.md' }) do
    names[name] = true
  end
  for _, name in ipairs(instructions.localInstructionFileCandidates or { 'AGENTS.local.md', 'CLAUDE.local.md' }) do
    names[name] = true
  end
  return names
end

-- Whether the server answers hover outside instruction files (the hover.otherFiles setting).
function M.hovers_other_files(opts)
  opts = opts or M.get()
  local hover = opts.settings and opts.settings.hover
  local other = type(hover) == 'table' and hover.otherFiles
  return type(other) == 'string' and other ~= 'off'
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

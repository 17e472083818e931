-- The Neovim recipe of docs/protocol.md ("Who may connect"): vim.lsp.start with
-- cmd = vim.lsp.rpc.connect(...) and the token in init_options.authToken.
--
--   nvim --headless --clean -l nvim_socket_client.lua
-- with DSH_MODE (tcp|unix), DSH_TARGET (port or socket path), DSH_TOKEN_FILE (tcp only),
-- DSH_STORE and DSH_CWD in the environment. Prints one JSON object on stdout.
local mode = os.getenv('DSH_MODE')
local target = os.getenv('DSH_TARGET')
local token_file = os.getenv('DSH_TOKEN_FILE')
local cwd = os.getenv('DSH_CWD')
local out = {}

local function run()
  local init_options = { store = { path = os.getenv('DSH_STORE') } }
  if token_file and token_file ~= '' then
    init_options.authToken = vim.fn.readfile(token_file)[1]
  end
  local cmd
  if mode == 'tcp' then
    cmd = vim.lsp.rpc.connect('127.0.0.1', tonumber(target))
  else
    cmd = vim.lsp.rpc.connect(target)
  end
  local client_id = vim.lsp.start({
    name = 'dsh-sidecar',
    cmd = cmd,
    root_dir = cwd,
    init_options = init_options,
  })
  assert(client_id, 'vim.lsp.start returned no client')
  local client = vim.lsp.get_client_by_id(client_id)
  assert(vim.wait(30000, function() return client.initialized end, 20), 'initialize timed out')
  out.protocolVersion = client.server_capabilities.experimental.dsh.protocolVersion
  local opened = client:request_sync('dsh/session/open', { cwd = cwd, sessionId = 'nvim-' .. mode }, 30000)
  assert(opened and opened.result, 'dsh/session/open: ' .. vim.inspect(opened))
  out.sessionId = opened.result.session.id
  local preview = client:request_sync('dsh/context/preview', { cwd = cwd }, 30000)
  out.preview = preview.result.text
  client:stop()
  assert(vim.wait(30000, function() return client:is_stopped() end, 20), 'stop timed out')
  out.stopped = true
end

local ok, err = xpcall(run, debug.traceback)
if not ok then
  out.error = err
end
io.stdout:write(vim.json.encode(out) .. '\n')
-- An uncaught error would leave a headless Neovim running: always leave explicitly.
vim.cmd(ok and 'qa!' or 'cquit 1')

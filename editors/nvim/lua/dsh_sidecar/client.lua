-- One sidecar LSP client per project root, behind a small API that hides the differences between
-- Neovim 0.7 (vim.lsp.start_client, dot-call client methods) and 0.11+ (vim.lsp.start with
-- attach = false, method-call client methods).

local config = require('dsh_sidecar.config')
local keymaps = require('dsh_sidecar.keymaps')
local methods = require('dsh_sidecar.methods')

local M = {}

local uv = vim.uv or vim.loop
-- 0.11 made client methods real methods (client:request) and deprecated the dot form; it also gave
-- vim.lsp.start an `attach = false` option, which lets us start a client before attaching buffers.
local modern = vim.fn.has('nvim-0.11') == 1

-- root directory -> state { root, id, initialized, failed, waiters, inflight, server }
local states = {}
-- notification method -> list of listener functions
local listeners = {}

M.api_name = modern and 'vim.lsp.start' or 'vim.lsp.start_client'

-- Why no sidecar can run in this editor session, or nil. Set by the first start that fails, so
-- other buffers and projects spawn nothing more and the user reads one notice, not one per
-- file; :DshInstall and :DshRestart clear it (M.restart).
M.unavailable = nil
-- Commands whose `--help` ran fine in this session: the probe runs once per command.
local probed = {}
-- Command -> client states waiting for the probe that runs for it.
local probing = {}
local noticed = false

-- Absolute, without a trailing slash (':p' adds one to directories).
function M.normalize_dir(dir)
  dir = vim.fn.fnamemodify(dir, ':p')
  return (#dir > 1 and dir:gsub('/+$', '')) or dir
end

-- Walk up from `dir` to the first directory holding one of `markers` (a file or a directory:
-- .git is a file in worktrees and submodules).
function M.find_root(dir, markers)
  dir = M.normalize_dir(dir)
  while true do
    for _, marker in ipairs(markers) do
      if uv.fs_stat(dir .. '/' .. marker) then
        return dir
      end
    end
    local parent = vim.fn.fnamemodify(dir, ':h')
    if parent == dir then
      return nil
    end
    dir = parent
  end
end

-- Absolute path of the file behind a buffer, or nil for scratch, help, terminal and URI buffers
-- (fugitive://, oil://): touches are about files on disk.
function M.buffer_path(bufnr)
  if not vim.api.nvim_buf_is_valid(bufnr) or vim.bo[bufnr].buftype ~= '' then
    return nil
  end
  local name = vim.api.nvim_buf_get_name(bufnr)
  if name == '' or name:match('^%a[%w+.-]*://') then
    return nil
  end
  return vim.fn.fnamemodify(name, ':p')
end

function M.root_for_dir(dir)
  return M.find_root(dir, config.root_markers())
end

function M.root_for_buffer(bufnr)
  local path = M.buffer_path(bufnr)
  return path and M.root_for_dir(vim.fn.fnamemodify(path, ':h'))
end

function M.format_error(err)
  if err == nil then
    return nil
  end
  if type(err) ~= 'table' then
    return tostring(err)
  end
  local code = type(err.data) == 'table' and err.data.code or err.code
  return (err.message or vim.inspect(err)) .. (code and (' [' .. tostring(code) .. ']') or '')
end

local function call_method(client, name, ...)
  if modern then
    return client[name](client, ...)
  end
  return client[name](...)
end

local function flush_waiters(st)
  local waiters = st.waiters
  st.waiters = {}
  for _, cb in ipairs(waiters) do
    cb(st.failed)
  end
end

-- Refused settings (dsh/settings/didCheck): message text -> { [client id] = true } of the
-- sidecars that currently refuse it. Every sidecar of the editor reads the same settings, so a
-- refusal is shown once, when the first one reports it, and again only after it was fixed.
local refusals = {}

-- "dsh_sidecar: setting <key> = <value as JSON> ignored: <why, with the expected form>".
local function refusal_text(refusal)
  local key = tostring(refusal.key)
  local ok, value = pcall(vim.json.encode, refusal.value)
  -- Older Neovims' encoder writes "/" as "\/", which is valid JSON but not what was typed.
  value = ok and value:gsub('\\/', '/') or tostring(refusal.value)
  if #value > 60 then
    value = value:sub(1, 57) .. '...'
  end
  local why = tostring(refusal.message or '')
  if why:sub(1, #key + 2) == key .. ': ' then
    why = why:sub(#key + 3)
  end
  return ('dsh_sidecar: setting %s = %s ignored: %s'):format(key, value, why)
end

local function settings_checked(client_id, refused)
  local now = {}
  for _, refusal in ipairs(type(refused) == 'table' and refused or {}) do
    now[refusal_text(refusal)] = true
  end
  for text, ids in pairs(refusals) do
    if not now[text] then
      ids[client_id] = nil
      if next(ids) == nil then
        refusals[text] = nil
      end
    end
  end
  for text in pairs(now) do
    if not refusals[text] then
      refusals[text] = {}
      vim.notify(text, vim.log.levels.WARN)
    end
    refusals[text][client_id] = true
  end
end

-- The one notice of an editor session without a runnable sidecar: short enough for one screen
-- line (a longer one, or two, would stop the editor at a Press-ENTER prompt), naming the
-- command that helps.
function M.notice_text()
  if config.cmd_is_default() then
    return 'dsh_sidecar: no sidecar installed. Run :DshInstall'
  end
  return 'dsh_sidecar: the sidecar did not start. See :checkhealth dsh_sidecar'
end

local function give_up(reason)
  M.unavailable = M.unavailable or { reason = reason }
  if not noticed then
    noticed = true
    vim.schedule(function()
      vim.notify(M.notice_text(), vim.log.levels.WARN)
    end)
  end
end

local function unavailable_error()
  return {
    message = 'no runnable dsh-sidecar (' .. M.unavailable.reason .. '); :DshInstall or :DshRestart',
    data = { code = 'sidecar-unavailable' },
    unavailable = true,
  }
end

-- A start that failed before the client existed (or before it answered initialize).
local function fail_start(st, reason)
  give_up(reason)
  st.failed = st.failed or unavailable_error()
  if states[st.root] == st then
    states[st.root] = nil
  end
  flush_waiters(st)
end

-- Fail everything still waiting on a client that is gone, so every callback runs exactly once
-- and synchronous callers return instead of running into their timeout.
local function on_exit(st, code, signal)
  if not st.initialized and not st.stopping then
    -- Neovim reports a non-zero exit itself; ours adds the notice (once) and stops respawning.
    give_up(('exited with code %s before it was ready'):format(code))
  end
  st.failed = st.failed or { message = ('dsh-sidecar exited (code %s, signal %s)'):format(code, signal) }
  if st.id then
    settings_checked(st.id, {})
  end
  if states[st.root] == st then
    states[st.root] = nil
  end
  flush_waiters(st)
  local inflight = st.inflight
  st.inflight = {}
  for cb in pairs(inflight) do
    cb(st.failed)
  end
end

function M.emit(method, params, client_id)
  for _, fn in ipairs(listeners[method] or {}) do
    local ok, err = pcall(fn, params, client_id)
    if not ok then
      vim.notify('dsh_sidecar: ' .. method .. ' listener failed: ' .. tostring(err), vim.log.levels.ERROR)
    end
  end
end

-- Returns a function that removes the listener again.
function M.subscribe(method, fn)
  listeners[method] = listeners[method] or {}
  table.insert(listeners[method], fn)
  return function()
    for i, f in ipairs(listeners[method]) do
      if f == fn then
        table.remove(listeners[method], i)
        return
      end
    end
  end
end

-- Whether our hover should stay out of `bufnr`: a source file (not an instruction file) to which
-- another client with hover is attached. Neovim 0.10 shows the last hover answer, so ours would
-- replace that server's; 0.11+ shows both, ours first. Instruction files keep ours.
local function yields_hover(own_id, bufnr)
  if not bufnr or bufnr == 0 then
    bufnr = vim.api.nvim_get_current_buf()
  end
  if not vim.api.nvim_buf_is_valid(bufnr) then
    return false
  end
  local name = vim.fn.fnamemodify(vim.api.nvim_buf_get_name(bufnr), ':t')
  if config.instruction_file_names()[name] then
    return false
  end
  local get = vim.lsp.get_clients or vim.lsp.get_active_clients
  for _, other in ipairs(get({ bufnr = bufnr })) do
    if other.id ~= own_id and other.server_capabilities and other.server_capabilities.hoverProvider then
      return true
    end
  end
  return false
end

-- Answer hover requests for such buffers with "nothing" without asking the sidecar. The answer
-- still comes (scheduled, like a real one), because 0.11+ and vim.lsp.buf_request_all wait for
-- one per client; without a handler (0.10's vim.lsp.buf.hover) none is needed, and calling the
-- default one would print "No information available".
local function guard_hover(client)
  local request = client.request
  local function answer_nothing(method, params, handler, bufnr)
    if handler then
      vim.schedule(function()
        handler(nil, nil, { method = method, client_id = client.id, bufnr = bufnr, params = params })
      end)
    end
    return true, nil
  end
  -- 0.11+ callers write client:request(...), older ones (and deprecated code) client.request(...);
  -- the original takes both, so it gets the arguments as they came.
  client.request = function(...)
    local method, params, handler, bufnr
    if select(1, ...) == client then
      method, params, handler, bufnr = select(2, ...)
    else
      method, params, handler, bufnr = ...
    end
    if method == 'textDocument/hover' and yields_hover(client.id, bufnr) then
      return answer_nothing(method, params, handler, bufnr)
    end
    return request(...)
  end
end

local function lsp_config(st, opts)
  local settings = config.wire_settings(opts)
  local cfg = {
    name = opts.name,
    cmd = config.cmd(opts),
    cmd_env = opts.cmd_env,
    root_dir = st.root,
    init_options = settings,
    -- Answers workspace/configuration pulls (section "dsh"); 0.8+ also pushes it after init.
    settings = { dsh = settings },
    handlers = {
      [methods.CONTEXT_DID_CHANGE] = function(_, params, ctx)
        M.emit(methods.CONTEXT_DID_CHANGE, params, ctx.client_id)
      end,
      [methods.SETTINGS_DID_CHECK] = function(_, params, ctx)
        settings_checked(ctx.client_id, params and params.refused)
      end,
    },
    on_init = function(client, result)
      -- Keep the object: 0.7's get_client_by_id() only knows the client after on_init returns.
      st.client = client
      guard_hover(client)
      st.initialized = true
      st.server = {
        info = result and result.serverInfo,
        dsh = result and result.capabilities and result.capabilities.experimental
          and result.capabilities.experimental.dsh,
      }
      if vim.fn.has('nvim-0.8') == 0 then
        -- 0.7 leaves this to the caller (see :h vim.lsp.start_client() on_init).
        call_method(client, 'notify', 'workspace/didChangeConfiguration', { settings = { dsh = settings } })
      end
      flush_waiters(st)
    end,
    on_attach = function(_, bufnr)
      keymaps.on_attach(bufnr)
    end,
    on_exit = function(code, signal)
      -- 0.7 calls on_exit in a fast (luv) context, where most of the API is off limits.
      vim.schedule(function()
        on_exit(st, code, signal)
      end)
    end,
  }
  return cfg
end

local function spawn(st, opts)
  local cfg = lsp_config(st, opts)
  local ok, id
  if modern then
    -- Our registry already keeps one client per root; never let start() hand back a client
    -- whose on_init already ran elsewhere.
    ok, id = pcall(vim.lsp.start, cfg, {
      attach = false,
      reuse_client = function()
        return false
      end,
    })
  else
    ok, id = pcall(vim.lsp.start_client, cfg)
  end
  if not ok or not id then
    return fail_start(st, ('could not start %s: %s'):format(table.concat(cfg.cmd, ' '), ok and 'start returned nil' or tostring(id)))
  end
  st.id = id
end

-- Run `cmd --help` (it parses the command line without loading the server): cb(nil) when it
-- exits 0, else cb(why). Asynchronous, so opening a file never waits for it.
local function probe(cmd, cb)
  local output = {}
  local function collect(_, data)
    for _, line in ipairs(data or {}) do
      if line ~= '' then
        table.insert(output, line)
      end
    end
  end
  local argv = vim.list_extend(vim.deepcopy(cmd), { '--help' })
  local ok, job = pcall(vim.fn.jobstart, argv, {
    on_stdout = collect,
    on_stderr = collect,
    on_exit = function(_, code)
      cb(code ~= 0 and ('`%s` exited with %d: %s'):format(table.concat(argv, ' '), code, output[#output] or '') or nil)
    end,
  })
  if not ok or job <= 0 then
    cb('cannot run ' .. cmd[1])
  end
end

local function start(root)
  local st = { root = root, initialized = false, waiters = {}, inflight = {} }
  if M.unavailable then
    st.failed = unavailable_error()
    return st
  end
  states[root] = st
  local opts = config.get()
  local cmd = config.cmd(opts)
  if vim.fn.executable(cmd[1]) ~= 1 then
    -- Checked here so Neovim does not report a failed spawn for every buffer.
    fail_start(st, 'not executable: ' .. cmd[1])
    return st
  end
  local key = table.concat(cmd, '\0')
  if probed[key] then
    spawn(st, opts)
    return st
  end
  -- Projects opened while the probe runs wait for its verdict instead of probing again.
  if probing[key] then
    table.insert(probing[key], st)
    return st
  end
  local waiting = { st }
  probing[key] = waiting
  probe(cmd, function(why)
    if probing[key] == waiting then
      probing[key] = nil
    end
    if not why then
      probed[key] = true
    end
    for _, each in ipairs(waiting) do
      if states[each.root] == each then -- else restarted meanwhile
        if why then
          fail_start(each, why)
        else
          spawn(each, opts)
        end
      end
    end
  end)
  return st
end

-- Stop every sidecar, forget any failed start, then cb() once the old processes are gone (a
-- new sidecar would find the session store still held by the old one).
function M.restart(cb)
  M.unavailable, noticed, probed, probing = nil, false, {}, {}
  local old = {}
  for root, st in pairs(states) do
    st.stopping = true
    states[root] = nil
    if st.id then
      table.insert(old, st.id)
      vim.lsp.stop_client(st.id)
    end
  end
  local deadline = uv.now() + 5000
  local function poll()
    local alive = vim.tbl_filter(function(id)
      return vim.lsp.get_client_by_id(id) ~= nil
    end, old)
    if #alive == 0 or uv.now() > deadline then
      for _, id in ipairs(alive) do
        vim.lsp.stop_client(id, true)
      end
      return cb()
    end
    vim.defer_fn(poll, 50)
  end
  poll()
end

-- The state of the client for `root`, started when there is none (or the last one exited).
function M.ensure(root)
  return states[root] or start(root)
end

function M.get(root)
  return states[root]
end

function M.all()
  local list = {}
  for _, st in pairs(states) do
    table.insert(list, st)
  end
  table.sort(list, function(a, b)
    return a.root < b.root
  end)
  return list
end

function M.lsp_client(st)
  if st.client and not st.failed then
    return st.client
  end
end

-- Run cb(err) once the client answered initialize (or at once with the error if it cannot).
function M.when_initialized(st, cb)
  if st.initialized or st.failed then
    cb(st.failed)
  else
    table.insert(st.waiters, cb)
  end
end

-- Request after initialization; cb(err, result) runs exactly once.
function M.request(st, method, params, cb, bufnr)
  local done = false
  local function once(err, result)
    if not done then
      done = true
      st.inflight[once] = nil
      cb(err, result)
    end
  end
  M.when_initialized(st, function(err)
    if err then
      return once(err)
    end
    local client = M.lsp_client(st)
    if not client then
      return once({ message = 'dsh-sidecar client is gone' })
    end
    st.inflight[once] = true
    local sent = call_method(client, 'request', method, params, function(e, result)
      once(e, result)
    end, bufnr)
    if not sent then
      once({ message = 'dsh-sidecar client is shutting down' })
    end
  end)
end

function M.notify(st, method, params)
  local client = st.initialized and M.lsp_client(st)
  if not client then
    return false
  end
  return call_method(client, 'notify', method, params)
end

function M.attach(st, bufnr)
  if st.id and vim.api.nvim_buf_is_valid(bufnr) then
    return vim.lsp.buf_attach_client(bufnr, st.id)
  end
  return false
end

-- Push new settings to every running client (workspace/didChangeConfiguration, section "dsh").
function M.push_settings()
  local settings = config.wire_settings()
  for _, st in pairs(states) do
    local client = M.lsp_client(st)
    if client then
      client.config.settings = { dsh = settings }
      if client.settings then
        client.settings = client.config.settings
      end
      M.notify(st, 'workspace/didChangeConfiguration', { settings = { dsh = settings } })
    end
  end
end

return M

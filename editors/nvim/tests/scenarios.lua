-- Headless scenarios for tests/editors/test_nvim_plugin.py, run against the real sidecar:
--   DSH_SCENARIO=<name> nvim --headless --clean --cmd 'set rtp^=editors/nvim' -c 'luafile <this>'
-- Every observation is one JSON object per line on stdout (print goes to stderr in --headless);
-- pytest parses those lines and makes the assertions. Any Lua error exits with status 1 through
-- xpcall + :cquit, because an uncaught error would leave headless Neovim running forever.

local function out(record)
  io.stdout:write(vim.json.encode(record) .. '\n')
  io.stdout:flush()
end

local function env(name)
  return assert(os.getenv(name), name .. ' is not set')
end

local TIMEOUT = tonumber(os.getenv('DSH_TEST_TIMEOUT_MS') or '') or 30000

local function wait_for(what, predicate)
  if not vim.wait(TIMEOUT, predicate, 10) then
    error('timed out waiting for ' .. what, 2)
  end
end

local function lines_of(buf)
  return vim.api.nvim_buf_get_lines(buf, 0, -1, false)
end

local project = os.getenv('DSH_TEST_PROJECT')

-- setup{} with the test's server, store and timeout; DSH_TEST_OPTIONS (JSON) adds options.
local function setup(extra)
  local opts = {
    python = env('DSH_TEST_PYTHON'),
    settings = { store = { path = env('DSH_TEST_STORE') } },
    timeout_ms = TIMEOUT,
  }
  local given = os.getenv('DSH_TEST_OPTIONS')
  if given then
    opts = vim.tbl_deep_extend('force', opts, vim.json.decode(given))
  end
  require('dsh_sidecar').setup(vim.tbl_deep_extend('force', opts, extra or {}))
end

-- Edit a project file and wait until the plugin attached it to the project's sidecar (which
-- happens only after the project session is open).
local function edit(relpath)
  vim.cmd('edit ' .. vim.fn.fnameescape(project .. '/' .. relpath))
  local buf = vim.api.nvim_get_current_buf()
  local client = require('dsh_sidecar.client')
  local st
  wait_for('the sidecar to attach ' .. relpath, function()
    -- Keep hold of the state: a client that died is dropped from the registry.
    st = st or client.get(project)
    if st and st.failed then
      error('sidecar failed: ' .. client.format_error(st.failed))
    end
    return st ~= nil and st.id ~= nil and vim.lsp.buf_is_attached(buf, st.id)
  end)
  return buf
end

-- Run an Ex command that fills a dsh:// scratch buffer and return that buffer's lines.
local function scratch(command)
  vim.cmd(command)
  local buf = vim.api.nvim_get_current_buf()
  assert(vim.api.nvim_buf_get_name(buf):match('^dsh://'), command .. ' did not open a scratch buffer')
  wait_for(command .. ' to finish', function()
    return vim.b[buf].dsh_status ~= 'loading'
  end)
  return {
    command = command,
    name = vim.api.nvim_buf_get_name(buf),
    status = vim.b[buf].dsh_status,
    lines = lines_of(buf),
  }
end

local function message_texts(messages)
  local texts = {}
  for _, m in ipairs(messages or {}) do
    for _, block in ipairs(m.content or {}) do
      if block.type == 'text' then
        table.insert(texts, block.text)
      end
    end
  end
  return texts
end

-- must('what', api.call(...)): the call's (result, err) pair expands into the last arguments.
local function must(what, result, err)
  if err then
    error(what .. ' failed: ' .. require('dsh_sidecar.client').format_error(err), 2)
  end
  return result
end

local scenarios = {}

function scenarios.methods()
  out({ check = 'methods', methods = require('dsh_sidecar.methods') })
end

function scenarios.pending()
  setup()
  local api = require('dsh_sidecar').api
  local changes = {}
  api.on_context_changed(function(params)
    table.insert(changes, params)
  end)
  local buf = edit('pkg/src/x.txt')
  local header = must('project_session', api.project_session(buf))
  wait_for('dsh/context/didChange for the project session', function()
    for _, c in ipairs(changes) do
      if c.sessionId == header.id and c.pendingCount > 0 then
        return true
      end
    end
    return false
  end)
  out({ check = 'didChange', session = header.id, changes = changes })
  out(vim.tbl_extend('force', { check = 'pending' }, scratch('DshPending')))
end

function scenarios.hover()
  setup()
  local buf = edit('pkg/AGENTS.md')
  local responses = vim.lsp.buf_request_sync(buf, 'textDocument/hover', {
    textDocument = { uri = vim.uri_from_bufnr(buf) },
    position = { line = 0, character = 0 },
  }, TIMEOUT)
  local contents = {}
  for _, response in pairs(responses or {}) do
    assert(not response.err, 'hover failed: ' .. vim.inspect(response.err))
    if response.result then
      table.insert(contents, response.result.contents)
    end
  end
  local header = must('project_session', require('dsh_sidecar').api.project_session(buf))
  out({ check = 'hover', contents = contents, session = header.id })
end

function scenarios.scopes()
  setup()
  edit('pkg/src/x.txt')
  out(vim.tbl_extend('force', { check = 'scopes' }, scratch('DshScopes')))
end

-- `q` in the dsh:// buffers closes them instead of recording a macro: the command buffers in
-- their split, one left alone in its tab page, and the :DshInstall log.
function scenarios.close_with_q()
  setup({ install_python = '/bin/false' })
  local file = edit('pkg/src/x.txt')
  local function press_q()
    local buf = vim.api.nvim_get_current_buf()
    local before = #vim.api.nvim_tabpage_list_wins(0)
    vim.api.nvim_feedkeys('q', 'mx', false)
    return {
      name = vim.api.nvim_buf_get_name(buf),
      windows = { before, #vim.api.nvim_tabpage_list_wins(0) },
      still_shown = vim.fn.bufwinid(buf) ~= -1,
      back_to_file = vim.api.nvim_get_current_buf() == file,
      recording = vim.fn.reg_recording(),
    }
  end
  local closed = {}
  for _, command in ipairs({ 'DshScopes', 'DshPending', 'DshPreview' }) do
    scratch(command)
    table.insert(closed, press_q())
  end
  -- Alone in the window (nothing to close): the file shown before comes back.
  scratch('DshScopes')
  vim.cmd('only')
  local alone = press_q()
  -- The install log, after an install that failed at once (install_python is /bin/false).
  vim.cmd('DshInstall')
  local log = vim.fn.bufnr('dsh://install')
  wait_for(':DshInstall to fail', function()
    return log ~= -1 and vim.b[log].dsh_status == 'error'
  end)
  vim.fn.win_gotoid(vim.fn.bufwinid(log))
  local install = press_q()
  out({ check = 'close_with_q', closed = closed, alone = alone, install = install })
end

function scenarios.preview()
  setup()
  edit('pkg/src/x.txt')
  out(vim.tbl_extend('force', { check = 'preview' }, scratch('DshPreview')))
  -- Settings changed at run time reach the sidecar with workspace/didChangeConfiguration.
  local settings = vim.deepcopy(require('dsh_sidecar.config').get().settings)
  settings.instructions = { instructionFileCandidates = { 'RULES.md', 'AGENTS.md' } }
  require('dsh_sidecar').configure(settings)
  -- The sidecar pulls workspace/configuration before it applies a change, so a request sent
  -- right after the notification may still see the old settings: wait until the new ones show.
  local api = require('dsh_sidecar').api
  local dir = project .. '/pkg/src'
  local applied, asking = false, false
  wait_for('the new settings to apply', function()
    if not applied and not asking then
      asking = true
      api.preview(dir, function(err, result)
        asking = false
        applied = not err and result.text:find('RULES.md', 1, true) ~= nil
      end)
    end
    return applied
  end)
  out(vim.tbl_extend('force', { check = 'preview_reconfigured' }, scratch('DshPreview')))
end

function scenarios.api()
  setup()
  local api = require('dsh_sidecar').api
  local changes = {}
  api.on_context_changed(function(params)
    table.insert(changes, params)
  end)
  edit('pkg/src/x.txt')

  local opened = must('open_session', api.open_session({ cwd = project }))
  local id = opened.session.id
  out({ check = 'open', resumed = opened.resumed, session = opened.session })

  local prepared = must('prepare_step', api.prepare_step(id, { turn = 1, step = 1, prompt = { text = 'hello' } }))
  out({ check = 'prepare', texts = message_texts(prepared.messages), seqs = prepared.seqs, messages = prepared.messages })

  local call = 'call-1'
  must('append_messages', api.append_messages(id, 1, 1, {
    { id = 'm-a', role = 'assistant', content = { { type = 'text', text = 'reading x.txt' } }, source = { kind = 'model' } },
    { id = 'm-t', role = 'user', content = { { type = 'text', text = 'x' } }, source = { kind = 'tool', callId = call } },
  }))
  -- The agent's read reaches a touch: staged while the step is open, released by end_step.
  assert(api.tool_result(id, {
    token = call,
    name = 'read',
    arguments = { file_path = project .. '/pkg/src/x.txt' },
    isError = false,
  }), 'tool_result was not sent')
  must('end_step', api.end_step(id, { turn = 1, step = 1 }))

  local pending = must('pending', api.pending(id))
  out({ check = 'api_pending', texts = message_texts(pending.messages), changes = changes })

  -- The asynchronous form: callbacks instead of return values.
  local done
  api.prepare_step(id, { turn = 1, step = 2 }, function(err, result)
    done = { err = err, result = result }
  end)
  wait_for('asynchronous prepare_step', function()
    return done ~= nil
  end)
  must('prepare_step (async)', done.result, done.err)
  out({ check = 'prepare2', texts = message_texts(done.result.messages) })
  must('end_step 2', api.end_step(id, { turn = 1, step = 2 }))
  must('end_turn', api.end_turn(id, { turn = 1, reason = 'stop' }))

  -- Errors come back as values: the sidecar's InvalidParams code, or the plugin's own.
  local _, bad_cwd = api.open_session({ cwd = project .. '/no/such/dir' })
  local _, unknown = api.pending('no-such-session')
  local listed = must('list_sessions', api.list_sessions())
  local ids = {}
  for _, header in ipairs(listed.sessions) do
    table.insert(ids, header.id)
  end
  out({
    check = 'errors',
    bad_cwd = bad_cwd and bad_cwd.data and bad_cwd.data.code,
    unknown = unknown and unknown.data and unknown.data.code,
    listed = ids,
    session = id,
  })

  local events = must('events', api.events(id, {}))
  local types = {}
  for _, e in ipairs(events.events) do
    table.insert(types, e.type)
  end
  out({ check = 'events', types = types })
end

function scenarios.health()
  setup()
  edit('pkg/src/x.txt')
  vim.cmd('checkhealth dsh_sidecar')
  out({ check = 'health', lines = lines_of(vim.api.nvim_get_current_buf()) })
end

function scenarios.help()
  -- `:help` finds the tags file shipped in doc/.
  vim.cmd('help dsh_sidecar')
  out({ check = 'help', file = vim.fn.expand('%:t'), line = vim.fn.getline('.') })
  vim.cmd('help dsh_sidecar-api')
  out({ check = 'help_api', line = vim.fn.getline('.') })
  for _, tag in ipairs({ 'dsh_sidecar-hover', 'dsh_sidecar-resume', 'dsh_sidecar.api.discard' }) do
    vim.cmd('help ' .. tag)
    out({ check = 'help_' .. tag, line = vim.fn.getline('.') })
  end
end

-- The first floating window's lines, once one shows (hover opens one).
local function float_lines()
  local lines
  wait_for('a floating window', function()
    for _, win in ipairs(vim.api.nvim_list_wins()) do
      if vim.api.nvim_win_get_config(win).relative ~= '' then
        lines = lines_of(vim.api.nvim_win_get_buf(win))
        return true
      end
    end
    return false
  end)
  return lines
end

local function k_mapping(buf)
  local mapping
  vim.api.nvim_buf_call(buf, function()
    mapping = vim.fn.maparg('K', 'n', false, true)
  end)
  return {
    buffer = mapping.buffer == 1,
    desc = mapping.desc,
    rhs = mapping.rhs,
    ours = vim.b[buf].dsh_hover_key,
  }
end

-- K in an instruction file shows the sidecar's hover; in another file it is left alone.
function scenarios.hover_key()
  setup()
  local buf = edit('pkg/AGENTS.md')
  out({ check = 'mapping', instruction = k_mapping(buf) })
  vim.cmd('normal K')
  out({ check = 'hover_float', lines = float_lines() })
  local other = edit('pkg/src/x.txt')
  out({ check = 'mapping_other', other = k_mapping(other) })
end

-- A K of the user's own (here a global mapping made before setup) stays theirs.
function scenarios.hover_key_user()
  vim.keymap.set('n', 'K', '<Cmd>let g:mine = 1<CR>')
  setup()
  local buf = edit('pkg/AGENTS.md')
  vim.cmd('normal K')
  out({ check = 'user_mapping', mapping = k_mapping(buf), mine = vim.g.mine })
end

-- :DshScopes for a file whose directory name a hostile repository chose (DSH_TEST_FILE).
function scenarios.hostile_scopes()
  setup()
  local path = project .. '/' .. env('DSH_TEST_FILE')
  -- bufadd takes any name; :edit would need the newline escaped.
  local buf = vim.fn.bufadd(path)
  vim.fn.bufload(buf)
  vim.api.nvim_set_current_buf(buf)
  vim.bo[buf].buflisted = true
  vim.cmd('doautocmd BufReadPost')
  out(vim.tbl_extend('force', { check = 'scopes' }, scratch('DshScopes')))
end

-- The project session, opened (or resumed) by the plugin.
function scenarios.resume()
  setup()
  local buf = edit('pkg/src/x.txt')
  local header = must('project_session', require('dsh_sidecar').api.project_session(buf))
  local client = require('dsh_sidecar.client')
  local info = require('dsh_sidecar.session').project_info(client.get(project))
  out({
    check = 'resume',
    id = header.id,
    cwd = header.cwd,
    resumed = info.resumed,
    note = info.note,
    pid = vim.fn.getpid(),
    state = require('dsh_sidecar.remembered').path(project),
  })
  if os.getenv('DSH_TEST_HEALTH') then
    vim.cmd('checkhealth dsh_sidecar')
    out({ check = 'health', lines = lines_of(vim.api.nvim_get_current_buf()) })
  end
end

-- api.discard: what goes on the wire for each way of calling it. The requests still go to the
-- real sidecar; the spy only notes them.
function scenarios.discard_shape()
  setup()
  local api = require('dsh_sidecar').api
  local client = require('dsh_sidecar.client')
  local buf = edit('pkg/src/x.txt')
  local id = must('project_session', api.project_session(buf)).id
  local sent = {}
  local request = client.request
  client.request = function(st, method, params, cb, ...)
    table.insert(sent, { method = method, params = vim.json.encode(params), root = st.root })
    return request(st, method, params, cb, ...)
  end
  local answers = {}
  local function note(label, result, err)
    table.insert(answers, { label = label, result = result ~= nil, err = err })
  end
  note('scopes', api.discard(id, 'msg-1', { 'pkg\0AGENTS.md' }))
  note('whole', api.discard(id, 'msg-2'))
  local calls = 0
  api.discard(id, 'msg-3', function(err, result)
    calls = calls + 1
    note('async', result, err)
  end)
  wait_for('the asynchronous discard', function()
    return calls > 0
  end)
  note('unknown', api.discard('no-such-session', 'msg-4'))
  client.request = request
  out({ check = 'discard', session = id, sent = sent, answers = answers, calls = calls })
end

-- api.discard against the real sidecar: the nested set queued by opening a file is dropped, and
-- stays dropped when the same directory is touched again.
function scenarios.discard()
  setup()
  local api = require('dsh_sidecar').api
  local id = must('project_session', api.project_session(project)).id
  -- The first step takes the baseline (which cannot be dropped); then a file of pkg/ is opened.
  must('prepare_step', api.prepare_step(id, { turn = 1, step = 1, prompt = { text = 'hi' } }))
  must('end_step', api.end_step(id, { turn = 1, step = 1 }))
  edit('pkg/src/x.txt')
  local before
  wait_for('the nested set to be pending', function()
    before = must('pending', api.pending(id, {})).messages
    return #before > 0
  end)
  local after = must('discard', api.discard(id, before[1].id)).messages
  edit('pkg/src/y.txt')
  local again = must('pending', api.pending(id, {})).messages
  out({
    check = 'discard_e2e',
    before = vim.tbl_map(api.text_of, before),
    after = #after,
    again = #again,
  })
end

-- The chat-plugin example of docs/editors/neovim.md, run as written against the stand-in plugin
-- (tests/mychat) and a scripted model that records every request it gets.
local function run_chat(script)
  setup()
  vim.opt.runtimepath:prepend(env('DSH_TEST_MYCHAT'))
  -- The chat happens in a scratch buffer, as in a real chat plugin: not a file of the project.
  vim.cmd('enew')
  vim.bo.buftype = 'nofile'
  local requests = {}
  local chat = require('mychat')
  chat.setup({
    provider = function(request)
      table.insert(requests, { turn = request.turn, step = request.step, messages = vim.deepcopy(request.messages) })
      return table.remove(script.responses, 1)
    end,
  })
  dofile(env('DSH_TEST_SNIPPET'))
  local answers = {}
  for _, prompt in ipairs(script.prompts) do
    table.insert(answers, chat.ask(prompt))
  end
  local api = require('dsh_sidecar').api
  local header = must('project_session', api.project_session(project))
  local events = {}
  for _, e in ipairs(must('events', api.events(header.id, {})).events) do
    table.insert(events, { type = e.type, turn = type(e.data) == 'table' and e.data.turn or nil })
  end
  out({ check = 'chat', requests = requests, answers = answers, session = header.id, events = events })
end

function scenarios.chat()
  run_chat({
    prompts = { 'What does x.txt say?', 'Thanks' },
    responses = {
      { content = '', tool_calls = { { id = 'call-1', name = 'read_file', arguments = { path = project .. '/pkg/src/x.txt' } } } },
      { content = 'It says hello.' },
      { content = 'You are welcome.' },
    },
  })
end

function scenarios.chat_resumed()
  run_chat({ prompts = { 'Anything new?' }, responses = { { content = 'The root rules changed.' } } })
end

-- :DshInstall with the default command (no `python`, no dsh-sidecar on PATH): the virtualenv
-- under stdpath('data'), the sidecar from this checkout, then a sidecar for the open buffer.
function scenarios.install()
  require('dsh_sidecar').setup({
    settings = { store = { path = env('DSH_TEST_STORE') } },
    timeout_ms = TIMEOUT,
    install_python = env('DSH_TEST_INSTALL_PYTHON'),
  })
  local client = require('dsh_sidecar.client')
  vim.cmd('edit ' .. vim.fn.fnameescape(project .. '/pkg/src/x.txt'))
  local buf = vim.api.nvim_get_current_buf()
  wait_for('the failed start', function()
    return client.unavailable ~= nil
  end)
  out({ check = 'before', unavailable = client.unavailable.reason, notice = client.notice_text() })
  vim.cmd('DshInstall')
  local log = vim.fn.bufnr('dsh://install')
  local statuses = { vim.b[log].dsh_status }
  -- pip needs the package index: allow it minutes, not the usual step timeout.
  if not vim.wait(600000, function()
    return vim.b[log].dsh_status ~= 'running'
  end, 100) then
    error('DshInstall did not finish')
  end
  table.insert(statuses, vim.b[log].dsh_status)
  local st
  wait_for('the sidecar to attach after the install', function()
    st = client.get(project)
    return st ~= nil and st.id ~= nil and vim.lsp.buf_is_attached(buf, st.id)
  end)
  local lsp_client = vim.lsp.get_client_by_id(st.id)
  out({
    check = 'install',
    statuses = statuses,
    log = lines_of(log),
    cmd = lsp_client.config.cmd,
    venv = require('dsh_sidecar.install').venv_dir(),
    checkout = require('dsh_sidecar.install').repo_root(),
  })
end

-- Another language server with hover (DSH_TEST_OTHER_SERVER, a small pygls server) next to ours.
local function start_other(buf)
  local cfg = {
    name = 'other',
    cmd = { env('DSH_TEST_PYTHON'), env('DSH_TEST_OTHER_SERVER') },
    root_dir = project,
  }
  local id
  if vim.fn.has('nvim-0.11') == 1 then
    id = vim.lsp.start(cfg, { attach = false })
  else
    id = vim.lsp.start_client(cfg)
  end
  assert(id, 'the other server did not start')
  vim.lsp.buf_attach_client(buf, id)
  wait_for('the other server to initialize', function()
    local c = vim.lsp.get_client_by_id(id)
    return c ~= nil and c.initialized ~= false and c.server_capabilities ~= nil and c.server_capabilities.hoverProvider ~= nil
  end)
  return id
end

local function hover_answers(buf)
  local responses = vim.lsp.buf_request_sync(buf, 'textDocument/hover', {
    textDocument = { uri = vim.uri_from_bufnr(buf) },
    position = { line = 0, character = 0 },
  }, TIMEOUT)
  local by_name = {}
  for id, response in pairs(responses or {}) do
    local c = vim.lsp.get_client_by_id(id)
    by_name[c and c.name or tostring(id)] = response.result and response.result.contents or vim.NIL
  end
  return by_name
end

-- K on a source file shows the other server's hover, not ours (hover.otherFiles would have ours
-- answer there); K in an instruction file shows ours.
function scenarios.hover_other()
  setup({ settings = { hover = { otherFiles = 'always' } } })
  local client = require('dsh_sidecar.client')
  for _, relpath in ipairs({ 'pkg/src/m.py', 'pkg/AGENTS.md' }) do
    local buf = edit(relpath)
    local alone = hover_answers(buf)
    local other = start_other(buf)
    local answers = hover_answers(buf)
    if vim.fn.maparg('K', 'n') ~= '' then
      vim.cmd('normal K')
    else
      -- 0.7, and 0.10 where the filetype set 'keywordprg' (python: pydoc), leave K to it.
      vim.lsp.buf.hover()
    end
    local mapped = vim.fn.maparg('K', 'n') ~= ''
    local shown = float_lines()
    -- Later answers would replace (0.10) or join (0.11+) the float: let them all arrive.
    vim.wait(1000, function()
      return false
    end, 50)
    local final = {}
    for _, win in ipairs(vim.api.nvim_list_wins()) do
      if vim.api.nvim_win_get_config(win).relative ~= '' then
        vim.list_extend(final, lines_of(vim.api.nvim_win_get_buf(win)))
        vim.api.nvim_win_close(win, true)
      end
    end
    out({ check = 'hover_other ' .. relpath, alone = alone, answers = answers, first = shown, final = final, k = mapped })
    vim.lsp.stop_client(other)
    wait_for('the other server to stop', function()
      return vim.lsp.get_client_by_id(other) == nil
    end)
  end
  assert(client.get(project), 'our sidecar went away')
end

-- Bad keys in setup{ settings }: the sidecar starts with the rest; each bad key is named once;
-- the fixed value applies to the running sidecar.
function scenarios.bad_settings()
  local bad = {
    store = { path = env('DSH_TEST_STORE') },
    hover = { otherFiles = 'sometimes' },
    timeContext = { timeZone = 'Mars/Olympus' },
    instructions = { maxBytes = 4096, nope = true },
  }
  setup({ settings = bad })
  local client = require('dsh_sidecar.client')
  local buf = edit('pkg/src/x.txt')
  local st = client.get(project)
  local id = st.id
  local before = hover_answers(buf)
  -- The same bad tree again: nothing new to say.
  require('dsh_sidecar').configure(vim.deepcopy(bad))
  local fixed = vim.deepcopy(bad)
  fixed.hover.otherFiles = 'always'
  require('dsh_sidecar').configure(fixed)
  local after
  wait_for('the fixed setting to apply', function()
    after = hover_answers(buf)
    return after.dsh_sidecar ~= nil and after.dsh_sidecar ~= vim.NIL
  end)
  out({
    check = 'bad_settings',
    messages = vim.split(vim.fn.execute('messages'), '\n', { trimempty = true }),
    before = before,
    after = after,
    same_client = client.get(project).id == id,
  })
end

-- The setup line of docs/editors/neovim.md for an environment of one's own (DSH_TEST_SNIPPET).
function scenarios.documented_setup()
  dofile(env('DSH_TEST_SNIPPET'))
  local buf = edit('pkg/src/x.txt')
  local st = require('dsh_sidecar.client').get(project)
  out({ check = 'documented_setup', cmd = vim.lsp.get_client_by_id(st.id).config.cmd, attached = vim.lsp.buf_is_attached(buf, st.id) })
end

-- compact_paths.expand over answers made up here (no sidecar): each case's result as expanded,
-- for pytest to compare with what the rule of docs/protocol.md gives.
function scenarios.compact_paths_unit()
  local compact_paths = require('dsh_sidecar.compact_paths')
  local root = '/work/proj'
  local full = {
    path = '/elsewhere/AGENTS.md',
    displayPath = 'AGENTS.md',
    scope = '.\0AGENTS.md',
    state = 'included',
    bytes = 24,
    digest = 'd1',
    includedBytes = 24,
    imports = { { path = '/work/proj/notes.md', state = 'included' } },
  }
  local cases = {
    root = { scope = '.\0AGENTS.md', state = 'included', bytes = 24, digest = 'd1', reason = vim.NIL },
    nested = { scope = 'a/b\0CLAUDE.md', state = 'duplicate', bytes = 7, reason = 'same content' },
    slash_name = { scope = '.\0.claude/CLAUDE.md', state = 'included', bytes = 3 },
    nested_slash_name = { scope = 'pkg\0.claude/CLAUDE.md', state = 'included', bytes = 3 },
    second_nul = { scope = 'a\0b\0c', state = 'included', bytes = 1 },
    null_fields = { path = vim.NIL, displayPath = vim.NIL, scope = 'pkg\0AGENTS.md', state = 'included' },
    display_only = { displayPath = 'pkg/AGENTS.md', scope = 'pkg\0AGENTS.md', state = 'included' },
    -- As the sidecar sends it: the rule would give user-global/AGENTS.md, so both paths come.
    user_global = {
      path = '/home/u/.dsh/AGENTS.md',
      displayPath = '$DSH_HOME/AGENTS.md',
      scope = 'user-global\0AGENTS.md',
      state = 'included',
      bytes = 5,
    },
    full = vim.deepcopy(full),
  }
  local names, files = {}, {}
  for name, file in pairs(cases) do
    table.insert(names, name)
    table.insert(files, file)
  end
  local result = { projectRoot = root, directory = root, files = files, sessions = {} }
  local same = compact_paths.expand(result) == result
  local expanded = {}
  for i, name in ipairs(names) do
    expanded[name] = files[i]
  end
  out({
    check = 'compact_paths_unit',
    root = root,
    same_table = same,
    expanded = expanded,
    full_untouched = vim.deep_equal(cases.full, full),
    -- Answers without files (an error's nil, a result of another shape) pass through as given.
    passthrough = {
      nil_result = compact_paths.expand(nil) == nil,
      no_files = vim.deep_equal(compact_paths.expand({ text = 'x' }), { text = 'x' }),
      null_files = compact_paths.expand({ files = vim.NIL }).files == vim.NIL,
    },
    asked = compact_paths.ask({ uri = 'file:///x' }),
    asked_empty = compact_paths.ask(nil),
  })
end

-- :DshScopes, :DshPreview, api.scopes and api.preview on a nested file (DSH_TEST_FILE), with a
-- spy on the wire: what each request sent, each answer as it arrived, and what callers got.
function scenarios.compact_paths()
  setup()
  local api = require('dsh_sidecar').api
  local client = require('dsh_sidecar.client')
  local methods = require('dsh_sidecar.methods')
  local relpath = env('DSH_TEST_FILE')
  edit(relpath)
  local wire = {}
  local request = client.request
  client.request = function(st, method, params, cb, ...)
    if method ~= methods.SCOPES and method ~= methods.CONTEXT_PREVIEW then
      return request(st, method, params, cb, ...)
    end
    local seen = { method = method, params = vim.deepcopy(params) }
    table.insert(wire, seen)
    return request(st, method, params, function(err, result, ...)
      -- A copy: the plugin fills the files in place once the answer is passed on.
      seen.err, seen.files = err, result and vim.deepcopy(result.files)
      return cb(err, result, ...)
    end, ...)
  end
  local scopes = scratch('DshScopes')
  local preview = scratch('DshPreview')
  local path = project .. '/' .. relpath
  local dir = vim.fn.fnamemodify(path, ':h')
  local api_scopes = must('api.scopes', api.scopes(vim.uri_from_fname(path)))
  local async
  api.preview(dir, function(err, result)
    async = { err = err, result = result }
  end)
  wait_for('the asynchronous api.preview', function()
    return async ~= nil
  end)
  local api_preview = must('api.preview', async.result, async.err)
  client.request = request
  -- The same questions without compactPaths (api.request sends params as given): full answers.
  local full_scopes = must('dsh/scopes', api.request(methods.SCOPES, { uri = vim.uri_from_fname(path) }))
  local full_preview = must('dsh/context/preview', api.request(methods.CONTEXT_PREVIEW, { cwd = dir }))
  out({
    check = 'compact_paths',
    wire = wire,
    scopes = scopes,
    preview = preview,
    api_scopes = { projectRoot = api_scopes.projectRoot, files = api_scopes.files },
    api_preview = { projectRoot = api_preview.projectRoot, files = api_preview.files },
    full_scopes = full_scopes.files,
    full_preview = full_preview.files,
  })
end

-- Proves the harness: a Lua error must end Neovim with status 1 at once.
function scenarios.error()
  error('deliberate failure')
end

local function stop_clients()
  local ok, client = pcall(require, 'dsh_sidecar.client')
  if not ok then
    return
  end
  for _, st in ipairs(client.all()) do
    if st.id then
      vim.lsp.stop_client(st.id)
    end
  end
  -- Let the sidecars shut down cleanly (they close their sessions and the store).
  vim.wait(5000, function()
    return #client.all() == 0
  end, 20)
end

local name = os.getenv('DSH_SCENARIO') or ''
local ok, err = xpcall(function()
  local scenario = assert(scenarios[name], 'unknown scenario ' .. name)
  scenario()
end, debug.traceback)
if not ok then
  io.stderr:write('SCENARIO ERROR: ' .. tostring(err) .. '\n')
  pcall(stop_clients)
  vim.cmd('cquit 1')
end
stop_clients()
out({ check = 'done' })
vim.cmd('cquit 0')

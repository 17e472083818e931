-- Sessions: the one the plugin opens per project root (so editor touches reach a live session) and
-- the Lua API that chat plugins drive the agent loop with.

local client = require('dsh_sidecar.client')
local compact_paths = require('dsh_sidecar.compact_paths')
local config = require('dsh_sidecar.config')
local methods = require('dsh_sidecar.methods')
local remembered = require('dsh_sidecar.remembered')

local M = {}

local uv = vim.uv or vim.loop

local CONTEXT_DISCARD = methods.CONTEXT_DISCARD
-- JSON-RPC InvalidParams: the one error that says a remembered session id itself is refused.
local INVALID_PARAMS = -32602

-- client state -> { header, err, resumed, note, waiters }; weak keys so a project dies with its
-- client.
local projects = setmetatable({}, { __mode = 'k' })
-- session id -> client state, for every session opened through this plugin.
local owners = {}

local function finish(project, err, header)
  project.err, project.header = err, header
  local waiters = project.waiters
  project.waiters = {}
  for _, cb in ipairs(waiters) do
    cb(err, header)
  end
end

local function same_directory(a, b)
  return a == b or (uv.fs_realpath(a) or a) == (uv.fs_realpath(b) or b)
end

-- Open the project's session: resume the one remembered for the root (see remembered.lua), or
-- start a new one when there is none, it is refused, it belongs to another directory, or another
-- Neovim has it open.
local function open_project_session(st, project)
  local resume, why, in_use = nil, 'resume_sessions is off', false
  if config.get().resume_sessions then
    resume, why, in_use = remembered.recall(st.root)
  end
  project.note = not resume and why ~= 'missing' and why or nil

  local function opened(err, result)
    if not err then
      owners[result.session.id] = st
      project.resumed = result.resumed
      -- Another Neovim owns the remembered session: this one's is for this run only.
      if config.get().resume_sessions and not in_use then
        local ok, werr = remembered.remember(st.root, result.session.id)
        if not ok then
          project.note = 'cannot remember the session: ' .. tostring(werr)
          vim.notify('dsh_sidecar: ' .. project.note, vim.log.levels.WARN)
        end
      end
    end
    finish(project, err, result and result.session)
  end

  local params = { cwd = st.root, sessionId = resume }
  client.request(st, methods.SESSION_OPEN, params, function(err, result)
    if not resume then
      return opened(err, result)
    end
    if err and err.code == INVALID_PARAMS then
      project.note = 'the remembered session ' .. resume .. ' was refused: ' .. client.format_error(err)
    elseif not err and not same_directory(result.session.cwd, st.root) then
      -- A store shared with another checkout: that session's touches are about other files.
      project.note = ('the remembered session %s belongs to %s'):format(resume, result.session.cwd)
      client.request(st, methods.SESSION_CLOSE, { sessionId = result.session.id }, function() end)
    else
      return opened(err, result)
    end
    client.request(st, methods.SESSION_OPEN, { cwd = st.root }, opened)
  end)
end

-- cb(err, SessionHeader) with the session the plugin keeps open for this client's project root.
function M.project_session(st, cb)
  local project = projects[st]
  if not project then
    project = { waiters = {} }
    projects[st] = project
    open_project_session(st, project)
  end
  if project.header or project.err then
    cb(project.err, project.header)
  else
    table.insert(project.waiters, cb)
  end
end

-- {header?, err?, resumed?, note?} of a client's project session, for :checkhealth.
function M.project_info(st)
  return projects[st]
end

-- Attach a buffer to the sidecar of its project. The didOpen that attaching sends is a touch, and
-- touches only reach live sessions, so buffers attach once the project session is open.
-- Returns false for buffers outside any project.
function M.attach(bufnr)
  bufnr = (bufnr == nil or bufnr == 0) and vim.api.nvim_get_current_buf() or bufnr
  local root = client.root_for_buffer(bufnr)
  if not root then
    return false
  end
  local st = client.ensure(root)
  M.project_session(st, function(err)
    if err and err.unavailable then
      return -- the one notice of client.lua said it; nothing runs to attach to
    end
    if err then
      -- Hover and diagnostics still work without a session: attach anyway.
      vim.notify('dsh_sidecar: no session for ' .. root .. ': ' .. client.format_error(err), vim.log.levels.WARN)
    end
    client.attach(st, bufnr)
  end)
  return true
end

-- The client state a request belongs to: the owner of params.sessionId, else the project of
-- params.cwd / params.uri, else the current buffer's project (or the working directory).
local function route(params)
  if params.sessionId then
    local st = owners[params.sessionId]
    if not st or client.get(st.root) ~= st then
      return nil, {
        message = 'session ' .. params.sessionId .. ' is not open in this Neovim (open it with api.open_session)',
        data = { code = 'unknown-session' },
      }
    end
    return st
  end
  local dir
  if params.cwd then
    dir = params.cwd:match('^file:') and vim.uri_to_fname(params.cwd) or params.cwd
  elseif params.uri then
    dir = vim.fn.fnamemodify(vim.uri_to_fname(params.uri), ':h')
  else
    local path = client.buffer_path(vim.api.nvim_get_current_buf())
    dir = path and vim.fn.fnamemodify(path, ':h') or vim.fn.getcwd()
  end
  -- A directory outside any project still gets a sidecar, rooted at the directory itself.
  local root = client.root_for_dir(dir) or client.normalize_dir(dir)
  return client.ensure(root)
end

-- Run `start(cb)` asynchronously when cb is given; otherwise wait for it and return result, err.
-- Waiting needs a context where vim.wait is allowed: from callbacks, pass cb.
local function sync_or_async(start, cb)
  if cb then
    start(cb)
    return
  end
  local done, result, err = false, nil, nil
  start(function(e, r)
    done, err, result = true, e, r
  end)
  local timeout = config.get().timeout_ms
  if not vim.wait(timeout, function()
    return done
  end, 10) then
    return nil, { message = ('no answer from dsh-sidecar within %d ms'):format(timeout) }
  end
  return result, err
end

-- Any request of the protocol, routed as above.
function M.request(method, params, cb)
  -- {} would go out as a JSON array.
  params = (params and next(params) ~= nil) and params or vim.empty_dict()
  return sync_or_async(function(done)
    local st, err = route(params)
    if not st then
      return done(err)
    end
    client.request(st, method, params, done)
  end, cb)
end

-- dsh/context/preview or dsh/scopes, asked with compactPaths; the answer comes back (to cb, or
-- returned) with every file's paths filled in again, as if asked without.
function M.request_files(method, params, cb)
  params = compact_paths.ask(params)
  if cb then
    return M.request(method, params, function(err, result)
      cb(err, compact_paths.expand(result))
    end)
  end
  local result, err = M.request(method, params)
  return compact_paths.expand(result), err
end

local api = {}
M.api = api

api.methods = methods
api.request = M.request

-- The project root a target names: a buffer number (0 or nil: the current buffer) or a directory.
-- Without a target, a current buffer outside any project (a chat or scratch buffer) falls back
-- to the working directory.
local function target_root(target)
  if type(target) == 'string' then
    local dir = target:match('^file:') and vim.uri_to_fname(target) or target
    return client.root_for_dir(dir) or client.normalize_dir(dir)
  end
  local bufnr = (target == nil or target == 0) and vim.api.nvim_get_current_buf() or target
  local root = client.root_for_buffer(bufnr)
  if root or target ~= nil then
    return root, 'buffer ' .. bufnr .. ' is not inside a project'
  end
  return client.root_for_dir(vim.fn.getcwd()) or client.normalize_dir(vim.fn.getcwd())
end

-- The plugin-managed session of a project, the one editor touches reach. `target`: a buffer
-- number or a directory (see target_root).
function api.project_session(target, cb)
  if type(target) == 'function' then
    target, cb = nil, target
  end
  return sync_or_async(function(done)
    local root, why = target_root(target)
    if not root then
      return done({ message = why })
    end
    M.project_session(client.ensure(root), done)
  end, cb)
end

-- {cwd, sessionId?, title?} -> {session, resumed}. A known sessionId resumes that session.
function api.open_session(params, cb)
  params = vim.tbl_extend('force', { cwd = vim.fn.getcwd() }, params or {})
  return sync_or_async(function(done)
    local st, err = route({ cwd = params.cwd })
    if not st then
      return done(err)
    end
    client.request(st, methods.SESSION_OPEN, params, function(e, result)
      if not e then
        owners[result.session.id] = st
      end
      done(e, result)
    end)
  end, cb)
end

local function with_session(method)
  return function(session_id, params, cb)
    if type(params) == 'function' then
      params, cb = nil, params
    end
    return M.request(method, vim.tbl_extend('force', params or {}, { sessionId = session_id }), cb)
  end
end

api.close_session = with_session(methods.SESSION_CLOSE)
-- (id, {turn, step, prompt?: {text, clientTimeZone?, rpcId?}}) -> {messages, seqs}
api.prepare_step = with_session(methods.STEP_PREPARE)
-- (id, {turn, step})
api.end_step = with_session(methods.STEP_END)
-- (id, {turn, reason})
api.end_turn = with_session(methods.TURN_END)
-- (id) -> {messages}: what the next prepare_step would claim before the prompt.
api.pending = with_session(methods.CONTEXT_PENDING)
api.surface = with_session(methods.SESSION_SURFACE)
-- (id, {afterSeq?, limit?}) -> {events}
api.events = with_session(methods.SESSION_EVENTS)
-- (id, {start, end, summary, compactionId?}) -> {seq}
api.compact = with_session(methods.SESSION_COMPACT)
-- (id, {query?}) -> {candidates}
api.candidates = with_session(methods.SESSION_REFERENCE_CANDIDATES)

-- (id, messageId, scopes?) -> {messages}: drop a pending message (or only the changes of it
-- whose scope is listed) before the next step claims it.
function api.discard(session_id, message_id, scopes, cb)
  if type(scopes) == 'function' then
    scopes, cb = nil, scopes
  end
  return M.request(CONTEXT_DISCARD, { sessionId = session_id, messageId = message_id, scopes = scopes }, cb)
end

-- (id) -> the turn number to use for the next turn: 1 for a new session, one past the highest
-- turn in the log for a resumed one (the surface may have been compacted, the log has them all).
function api.next_turn(session_id, cb)
  local page = 1000
  return sync_or_async(function(done)
    local last = 0
    local function fetch(after)
      local params = { limit = page, afterSeq = after }
      api.events(session_id, params, function(err, result)
        if err then
          return done(err)
        end
        for _, event in ipairs(result.events) do
          local turn = type(event.data) == 'table' and event.data.turn
          if type(turn) == 'number' and turn > last then
            last = turn
          end
        end
        if #result.events < page then
          return done(nil, last + 1)
        end
        fetch(result.events[#result.events].seq)
      end)
    end
    fetch(nil)
  end, cb)
end

-- The text blocks of a Message, joined by newlines (what a chat plugin shows or sends).
function api.text_of(message)
  local parts = {}
  for _, block in ipairs(message.content or {}) do
    if block.type == 'text' then
      table.insert(parts, block.text)
    end
  end
  return table.concat(parts, '\n')
end

local message_count = 0

-- A Message with one text block and a fresh id, e.g. text_message('assistant', reply,
-- { kind = 'model' }) or text_message('user', output, { kind = 'tool', callId = call.id }).
function api.text_message(role, text, source)
  message_count = message_count + 1
  return {
    id = ('nvim-%d-%x-%d'):format(vim.fn.getpid(), uv.hrtime(), message_count),
    role = role,
    content = { { type = 'text', text = text } },
    source = source,
  }
end

-- (id, events) -> {seqs}; events are {type, data, surfaceOp?}: user/message, assistant/message,
-- tool/result or session/title.
function api.append(session_id, events, cb)
  return M.request(methods.SESSION_APPEND, { sessionId = session_id, events = events }, cb)
end

-- The event that appends a Message: assistant/message, tool/result (source kind "tool") or a
-- direct user/message.
function api.message_event(turn, step, message)
  if message.role == 'assistant' then
    return { type = 'assistant/message', data = { turn = turn, step = step, message = message } }
  end
  if message.source and message.source.kind == 'tool' then
    return { type = 'tool/result', data = { turn = turn, step = step, message = message } }
  end
  return { type = 'user/message', data = message }
end

-- Append Messages of one step (model responses, tool results) in order.
function api.append_messages(session_id, turn, step, messages, cb)
  local events = {}
  for _, message in ipairs(messages) do
    table.insert(events, api.message_event(turn, step, message))
  end
  return api.append(session_id, events, cb)
end

-- (id, {token, name, arguments, isError, parentToken?, aborted?}): a notification, so it only
-- reports whether it was sent. Touches staged during an open step wait for end_step.
function api.tool_result(session_id, result)
  local st = owners[session_id]
  if not st then
    return false
  end
  return client.notify(st, methods.TOOL_RESULT, vim.tbl_extend('force', result, { sessionId = session_id }))
end

-- fn({sessionId, pendingCount}, client_id) on every dsh/context/didChange; returns an unsubscribe
-- function.
function api.on_context_changed(fn)
  return client.subscribe(methods.CONTEXT_DID_CHANGE, fn)
end

-- {query?, limit?} -> {sessions}, newest first, from the store of the current project's sidecar.
function api.list_sessions(params, cb)
  if type(params) == 'function' then
    params, cb = nil, params
  end
  return M.request(methods.SESSION_LIST, params, cb)
end

-- {cwd} -> preview of the baseline a new session at cwd would get.
function api.preview(cwd, cb)
  return M.request_files(methods.CONTEXT_PREVIEW, { cwd = cwd }, cb)
end

-- {uri} -> the instruction chain of a file's directory.
function api.scopes(uri, cb)
  return M.request_files(methods.SCOPES, { uri = uri }, cb)
end

api.attach = M.attach

return M

-- :DshPreview, :DshScopes and :DshPending: ask the sidecar, show the answer in a scratch buffer.
-- Requests are asynchronous so the editor never blocks; the scratch buffer says "loading" until
-- the answer arrives and b:dsh_status tells scripts when it is 'ready' (or 'error').

local client = require('dsh_sidecar.client')
local keymaps = require('dsh_sidecar.keymaps')
local methods = require('dsh_sidecar.methods')
local session = require('dsh_sidecar.session')

local M = {}

local printable
local agent_sessions

-- kind -> scratch buffer number
local scratch = {}

local function split(text)
  return vim.split(text or '', '\n', { plain = true })
end

local function set_lines(buf, lines, status)
  vim.bo[buf].modifiable = true
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, lines)
  vim.bo[buf].modifiable = false
  vim.api.nvim_buf_set_var(buf, 'dsh_status', status)
end

-- Run from one of our scratch buffers, a command means the file that buffer was made for.
local function source_buffer(bufnr)
  local ok, origin = pcall(vim.api.nvim_buf_get_var, bufnr, 'dsh_origin')
  if ok and vim.api.nvim_buf_is_valid(origin) then
    return origin
  end
  return bufnr
end

-- One scratch buffer per kind, reused, shown in a split unless a window already shows it.
local function open_scratch(kind, origin)
  local buf = scratch[kind]
  if not (buf and vim.api.nvim_buf_is_valid(buf)) then
    buf = vim.api.nvim_create_buf(false, true)
    scratch[kind] = buf
    vim.api.nvim_buf_set_name(buf, 'dsh://' .. kind)
    vim.bo[buf].buftype = 'nofile'
    vim.bo[buf].bufhidden = 'hide'
    vim.bo[buf].swapfile = false
    vim.bo[buf].filetype = 'markdown'
    keymaps.close_with_q(buf)
  end
  local win = vim.fn.bufwinid(buf)
  if win == -1 then
    vim.cmd('botright split')
    vim.api.nvim_win_set_buf(0, buf)
  else
    vim.api.nvim_set_current_win(win)
  end
  vim.api.nvim_buf_set_var(buf, 'dsh_origin', origin)
  set_lines(buf, { 'dsh: loading ' .. kind .. '...' }, 'loading')
  return buf
end

-- Open the scratch buffer of `kind`, run start(done) and render the answer (or the error) there.
local function show(kind, origin, start, render)
  local buf = open_scratch(kind, origin)
  start(function(err, result)
    if not vim.api.nvim_buf_is_valid(buf) then
      return
    end
    local ok, lines = false, nil
    if not err then
      -- A result of an unexpected shape must not leave the buffer "loading" for ever.
      ok, lines = pcall(render, result)
      err = not ok and lines or nil
    end
    if ok then
      ok, err = pcall(set_lines, buf, lines, 'ready')
    end
    if not ok then
      set_lines(buf, { 'dsh: ' .. kind .. ' failed: ' .. printable(client.format_error(err)) }, 'error')
    end
  end)
  return buf
end

local text_of = session.api.text_of

-- Control characters escaped: names come from the repository, and a newline in a directory name
-- would split a row (nvim_buf_set_lines refuses it outright) or forge one.
printable = function(text)
  return (tostring(text):gsub('%c', function(c)
    return ('\\x%02x'):format(c:byte())
  end))
end

-- JSON null may arrive as nil or vim.NIL depending on the Neovim version.
local function present(value)
  return value ~= nil and value ~= vim.NIL
end

local function change_labels(changes)
  local labels = {}
  for _, change in ipairs(changes or {}) do
    table.insert(labels, printable(change.action .. ' ' .. change.path))
  end
  return labels
end

local function describe_source(source)
  source = source or {}
  local label = source.kind == 'plugin' and source.plugin or source.kind or '?'
  local changes = change_labels(source.changes)
  if source.baseline then
    table.insert(changes, 1, 'baseline')
  end
  return #changes > 0 and (label .. ' (' .. table.concat(changes, ', ') .. ')') or label
end

-- The directory part of a scope key "<dir>\0<name>" ("pkg", "." or "user-global"), as the VS
-- Code inspector shows it: the NUL separator is not for display (it would show as ^@).
local function scope_dir(scope)
  local nul = scope:find('\0', 1, true)
  return nul and scope:sub(1, nul - 1) or scope
end

local function pad(text, width)
  return text .. string.rep(' ', width - vim.fn.strdisplaywidth(text))
end

-- The chain as aligned columns, like `dsh-sidecar scopes`: state, size in bytes, display path,
-- then (for :DshScopes) the scope directory, then the reason for any state but "included".
local function file_lines(files, with_scope)
  files = files or {}
  if #files == 0 then
    return { '(no instruction file exists in this chain)' }
  end
  local rows = {}
  local widths = { path = #'file', scope = #'scope' }
  for _, f in ipairs(files) do
    local row = {
      state = printable(f.state),
      size = present(f.bytes) and tostring(f.bytes) or '-',
      path = printable(present(f.displayPath) and f.displayPath or f.path),
      scope = present(f.scope) and printable(scope_dir(f.scope)) or '',
      reason = present(f.reason) and printable(f.reason) or '',
    }
    widths.path = math.max(widths.path, vim.fn.strdisplaywidth(row.path))
    widths.scope = math.max(widths.scope, vim.fn.strdisplaywidth(row.scope))
    table.insert(rows, row)
  end
  local function line(state, size, path, scope, reason)
    local text = ('%-10s %8s  %s'):format(state, size, pad(path, widths.path))
    if with_scope then
      text = text .. '  ' .. pad(scope, widths.scope)
    end
    local trimmed = (text .. '  ' .. reason):gsub('%s+$', '')
    return trimmed
  end
  local any_reason = false
  for _, row in ipairs(rows) do
    any_reason = any_reason or row.reason ~= ''
  end
  local lines = { line('state', 'bytes', 'file', 'scope', any_reason and 'note' or '') }
  for _, row in ipairs(rows) do
    table.insert(lines, line(row.state, row.size, row.path, row.scope, row.reason))
  end
  return lines
end

-- "412 of 65536 bytes": the text's size against maxBytes, read from the baseline identity.
local function baseline_size(result)
  local size = #(result.text or '')
  local ok, identity = pcall(vim.json.decode, result.baselineIdentity or '')
  local max = ok and type(identity) == 'table' and identity.maxBytes
  return type(max) == 'number' and ('%d of %s bytes'):format(size, tostring(max)) or (size .. ' bytes')
end

-- Why a preview is empty, from what the files say.
local function empty_reason(files)
  if #(files or {}) == 0 then
    return 'no instruction file applies here'
  end
  for _, f in ipairs(files) do
    if f.state == 'included' or f.state == 'truncated' then
      return 'nothing to send'
    end
  end
  return 'every instruction file was left out (see the states above)'
end

local function buffer_dir(bufnr)
  local path = client.buffer_path(bufnr)
  return path and vim.fn.fnamemodify(path, ':h') or vim.fn.getcwd()
end

function M.preview(bufnr)
  bufnr = source_buffer(bufnr)
  local cwd = buffer_dir(bufnr)
  return show('preview', bufnr, function(done)
    session.request_files(methods.CONTEXT_PREVIEW, { cwd = cwd }, done)
  end, function(result)
    local lines = {
      '# dsh preview: baseline for ' .. printable(cwd),
      '',
      'project root: ' .. printable(result.projectRoot),
      'baseline:     ' .. (result.text ~= '' and baseline_size(result) or ('none: ' .. empty_reason(result.files))),
      '',
      '## Files (broadest first)',
      '',
    }
    vim.list_extend(lines, file_lines(result.files, false))
    if result.text ~= '' then
      vim.list_extend(lines, { '', '## Text', '' })
      vim.list_extend(lines, split(result.text))
    end
    return lines
  end)
end

function M.scopes(bufnr)
  bufnr = source_buffer(bufnr)
  local path = client.buffer_path(bufnr)
  if not path then
    vim.notify('dsh_sidecar: :DshScopes needs a buffer backed by a file', vim.log.levels.ERROR)
    return nil
  end
  local uri = vim.uri_from_fname(path)
  return show('scopes', bufnr, function(done)
    session.request_files(methods.SCOPES, { uri = uri }, done)
  end, function(result)
    local lines = {
      '# dsh scopes: ' .. printable(path),
      '',
      'project root: ' .. printable(result.projectRoot),
      'directory:    ' .. printable(result.directory),
      '',
      '## Chain (broadest first)',
      '',
    }
    vim.list_extend(lines, file_lines(result.files, true))
    vim.list_extend(lines, { '', '## Live sessions', '' })
    for _, s in ipairs(result.sessions or {}) do
      local active = change_labels(s.active)
      table.insert(lines, s.sessionId .. ': ' .. (#active > 0 and table.concat(active, ', ') or '(nothing active)'))
    end
    if #(result.sessions or {}) == 0 then
      table.insert(lines, '(no live session in this sidecar)')
    end
    return lines
  end)
end

-- At most this many of the newest agents' sessions are listed under :DshPending.
local MAX_AGENT_SESSIONS = 10

local function inside(path, root)
  return path == root or (type(path) == 'string' and path:sub(1, #root + 1) == root .. '/')
end

-- The sessions that agents' hooks drive in `root` (newest first), each with its pending messages
-- read from the store (or the error); cb(list). A sidecar without them gives an empty list.
function agent_sessions(st, root, cb)
  client.request(st, methods.SESSION_LIST, vim.empty_dict(), function(err, listed)
    local found = {}
    -- Touches its hooks kept while the store was busy (an older sidecar does not send them).
    local waiting = (not err and listed and type(listed.waitingTouches) == 'table') and listed.waitingTouches or {}
    for _, s in ipairs((not err and listed and listed.sessions) or {}) do
      if type(s.agent) == 'string' and inside(s.cwd, root) and #found < MAX_AGENT_SESSIONS then
        s.waiting = tonumber(waiting[s.id]) or 0
        table.insert(found, s)
      end
    end
    local i = 0
    local function next_one()
      i = i + 1
      if i > #found then
        return cb(found)
      end
      client.request(st, methods.CONTEXT_PENDING, { sessionId = found[i].id }, function(e, r)
        found[i].messages = (not e and r and r.messages) or {}
        found[i].error = e
        next_one()
      end)
    end
    next_one()
  end)
end

function M.pending(bufnr)
  bufnr = source_buffer(bufnr)
  local root = client.root_for_buffer(bufnr) or client.root_for_dir(buffer_dir(bufnr))
  if not root then
    vim.notify('dsh_sidecar: :DshPending needs a buffer inside a project', vim.log.levels.ERROR)
    return nil
  end
  local header
  local st = client.ensure(root)
  return show('pending', bufnr, function(done)
    session.project_session(st, function(err, h)
      if err then
        return done(err)
      end
      header = h
      session.request(methods.CONTEXT_PENDING, { sessionId = h.id }, function(e, own)
        if e then
          return done(e)
        end
        agent_sessions(st, root, function(agents)
          done(nil, { messages = own.messages, agents = agents })
        end)
      end)
    end)
  end, function(result)
    local messages = result.messages or {}
    local lines = {
      '# dsh pending: session ' .. header.id,
      '',
      'project: ' .. printable(root),
      ('%d pending message(s) for the next step'):format(#messages),
    }
    for i, message in ipairs(messages) do
      vim.list_extend(lines, { '', ('## %d. %s'):format(i, describe_source(message.source)), '' })
      vim.list_extend(lines, split(text_of(message)))
    end
    if #result.agents > 0 then
      vim.list_extend(lines, { '', "# Agents' sessions in this project (dsh-sidecar hooks)" })
    end
    for _, s in ipairs(result.agents) do
      local head = ('## %s (%s, %s)'):format(printable(s.id), printable(s.agent), printable(s.cwd))
      vim.list_extend(lines, { '', head, '' })
      if s.error then
        table.insert(lines, 'pending: ' .. printable(client.format_error(s.error)))
      else
        table.insert(lines, ('%d pending message(s) for its next hook event'):format(#s.messages))
        for _, message in ipairs(s.messages) do
          table.insert(lines, '- ' .. describe_source(message.source))
        end
        if s.waiting > 0 then
          table.insert(lines, ('%d touch%s waiting'):format(s.waiting, s.waiting == 1 and '' or 'es'))
        end
      end
    end
    return lines
  end)
end

return M

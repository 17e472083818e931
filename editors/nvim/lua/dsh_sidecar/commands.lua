-- :DshPreview, :DshScopes and :DshPending: ask the sidecar, show the answer in a scratch buffer.
-- Requests are asynchronous so the editor never blocks; the scratch buffer says "loading" until
-- the answer arrives and b:dsh_status tells scripts when it is 'ready' (or 'error').

local client = require('dsh_sidecar.client')
local methods = require('dsh_sidecar.methods')
local session = require('dsh_sidecar.session')

local M = {}

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
      set_lines(buf, lines, 'ready')
    else
      set_lines(buf, { 'dsh: ' .. kind .. ' failed: ' .. client.format_error(err) }, 'error')
    end
  end)
  return buf
end

local function text_of(message)
  local parts = {}
  for _, block in ipairs(message.content or {}) do
    if block.type == 'text' then
      table.insert(parts, block.text)
    end
  end
  return table.concat(parts, '\n')
end

-- JSON null may arrive as nil or vim.NIL depending on the Neovim version.
local function present(value)
  return value ~= nil and value ~= vim.NIL
end

local function change_labels(changes)
  local labels = {}
  for _, change in ipairs(changes or {}) do
    table.insert(labels, change.action .. ' ' .. change.path)
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

-- One row per ScopeFile: state, size, display path, then (for :DshScopes) the scope, whose key
-- "<dir>\0<name>" is shown with a slash because a NUL would show as ^@.
local function file_lines(files, with_scope)
  local lines = {}
  for _, f in ipairs(files or {}) do
    local line = ('%-10s %8s B  %-30s'):format(f.state, present(f.bytes) and tostring(f.bytes) or '?', f.displayPath or f.path)
    if with_scope and present(f.scope) then
      line = line .. ' scope ' .. (f.scope:gsub('%z', '/'))
    end
    if present(f.reason) then
      line = line .. '  (' .. tostring(f.reason) .. ')'
    end
    table.insert(lines, (line:gsub('%s+$', '')))
  end
  if #lines == 0 then
    lines = { '(none)' }
  end
  return lines
end

local function buffer_dir(bufnr)
  local path = client.buffer_path(bufnr)
  return path and vim.fn.fnamemodify(path, ':h') or vim.fn.getcwd()
end

function M.preview(bufnr)
  bufnr = source_buffer(bufnr)
  local cwd = buffer_dir(bufnr)
  return show('preview', bufnr, function(done)
    session.request(methods.CONTEXT_PREVIEW, { cwd = cwd }, done)
  end, function(result)
    local lines = { '# dsh preview: baseline for ' .. cwd, '', 'identity: ' .. tostring(result.baselineIdentity), '', '## Files' }
    vim.list_extend(lines, file_lines(result.files))
    for _, path in ipairs(result.omitted or {}) do
      table.insert(lines, 'omitted: ' .. tostring(path))
    end
    for _, t in ipairs(result.truncated or {}) do
      table.insert(lines, 'truncated: ' .. (type(t) == 'table' and vim.inspect(t) or tostring(t)))
    end
    vim.list_extend(lines, { '', '## Text', '' })
    vim.list_extend(lines, split(result.text))
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
    session.request(methods.SCOPES, { uri = uri }, done)
  end, function(result)
    local lines = {
      '# dsh scopes: ' .. path,
      '',
      'project root: ' .. tostring(result.projectRoot),
      'directory:    ' .. tostring(result.directory),
      '',
      '## Chain (broadest first)',
    }
    vim.list_extend(lines, file_lines(result.files, true))
    vim.list_extend(lines, { '', '## Live sessions' })
    for _, s in ipairs(result.sessions or {}) do
      local active = change_labels(s.active)
      table.insert(lines, s.sessionId .. ': ' .. (#active > 0 and table.concat(active, ', ') or '(nothing active)'))
    end
    return lines
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
  return show('pending', bufnr, function(done)
    session.project_session(client.ensure(root), function(err, h)
      if err then
        return done(err)
      end
      header = h
      session.request(methods.CONTEXT_PENDING, { sessionId = h.id }, done)
    end)
  end, function(result)
    local messages = result.messages or {}
    local lines = {
      '# dsh pending: session ' .. header.id,
      '',
      'project: ' .. root,
      ('%d pending message(s) for the next step'):format(#messages),
    }
    for i, message in ipairs(messages) do
      vim.list_extend(lines, { '', ('## %d. %s'):format(i, describe_source(message.source)), '' })
      vim.list_extend(lines, split(text_of(message)))
    end
    return lines
  end)
end

return M

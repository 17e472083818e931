-- The session id of each project root, kept across Neovim restarts (what the VS Code extension
-- keeps in its workspaceState): one small JSON file per root under
--   stdpath('data')/dsh_sidecar/sessions/<sha256 of the root>.json
-- holding {version, root, sessionId, pid}. One file per root means two Neovims working on
-- different projects never rewrite each other's entry; each file is replaced atomically
-- (written beside it, then renamed), so a crash leaves the old file or the new one, never half.
--
-- `pid` is the Neovim that has the session open right now (cleared when it exits). A second
-- Neovim on the same project must not resume a session that is live in another sidecar process:
-- both would project touches into the same inbox. It starts a session of its own instead, and
-- leaves the file to the first one.

local M = {}

local uv = vim.uv or vim.loop

M.VERSION = 1
-- A state file is a few hundred bytes; anything far larger is not ours.
local MAX_BYTES = 64 * 1024

local pid = vim.fn.getpid()
-- roots whose file names this Neovim as the owner, to release at exit
local owned = {}
local exit_hook = false

function M.dir()
  return vim.fn.stdpath('data') .. '/dsh_sidecar/sessions'
end

function M.path(root)
  return M.dir() .. '/' .. vim.fn.sha256(root) .. '.json'
end

-- The file's bytes; nil when there is none, false when it is not a small regular file (never
-- opened then: opening a FIFO for reading would block until a writer came).
local function read_file(path)
  local stat = uv.fs_stat(path)
  if not stat then
    return nil
  end
  if stat.type ~= 'file' or stat.size > MAX_BYTES then
    return false
  end
  local fd = uv.fs_open(path, 'r', 0)
  if not fd then
    return false
  end
  local data = uv.fs_read(fd, stat.size, 0)
  uv.fs_close(fd)
  return data or false
end

-- The entry for `root`: a table, or nil plus why there is none ('missing' or what is wrong).
local function load(root)
  local data = read_file(M.path(root))
  if data == nil then
    return nil, 'missing'
  end
  if data == false then
    return nil, 'not a small regular file'
  end
  local ok, entry = pcall(vim.json.decode, data)
  if not ok or type(entry) ~= 'table' then
    return nil, 'not JSON'
  end
  if entry.version ~= M.VERSION or entry.root ~= root then
    return nil, 'written for another version or project'
  end
  if type(entry.sessionId) ~= 'string' or entry.sessionId == '' or #entry.sessionId > 1024 then
    return nil, 'no valid session id'
  end
  if entry.pid ~= nil and entry.pid ~= vim.NIL and type(entry.pid) ~= 'number' then
    return nil, 'no valid pid'
  end
  return entry
end

local function alive(other)
  if type(other) ~= 'number' or other ~= math.floor(other) or other <= 0 or other >= 2 ^ 31 or other == pid then
    return false
  end
  -- Signal 0 only asks whether the process exists; EPERM means it does, under another user.
  local called, ok, err = pcall(uv.kill, other, 0)
  return called and (ok == 0 or (type(err) == 'string' and err:find('EPERM') ~= nil))
end

local function write(root, entry)
  local dir = M.dir()
  if vim.fn.isdirectory(dir) == 0 and vim.fn.mkdir(dir, 'p', tonumber('700', 8)) == 0 then
    return false, 'cannot create ' .. dir
  end
  local path = M.path(root)
  local tmp = ('%s.%d.tmp'):format(path, pid)
  local fd, err = uv.fs_open(tmp, 'w', tonumber('600', 8))
  if not fd then
    return false, err
  end
  local data = vim.json.encode(entry)
  local written, werr = uv.fs_write(fd, data, 0)
  uv.fs_close(fd)
  if written ~= #data then
    uv.fs_unlink(tmp)
    return false, werr or 'short write'
  end
  local renamed, rerr = uv.fs_rename(tmp, path)
  if not renamed then
    uv.fs_unlink(tmp)
    return false, rerr
  end
  return true
end

-- Give up the claims of this Neovim, so the next one resumes without waiting for a dead pid.
local function release_all()
  for root, session_id in pairs(owned) do
    local entry = load(root)
    if entry and entry.pid == pid and entry.sessionId == session_id then
      entry.pid = nil
      write(root, entry)
    end
  end
  owned = {}
end

-- The session id to resume for `root`, or nil and the reason there is none:
--   'missing', a description of a corrupt file, or 'in use by Neovim <pid>'.
-- With `in_use` set, the caller must not remember its new session over the other Neovim's.
function M.recall(root)
  local entry, why = load(root)
  if not entry then
    return nil, why
  end
  if alive(entry.pid) then
    return nil, ('in use by Neovim %d'):format(entry.pid), true
  end
  return entry.sessionId
end

-- Remember `session_id` as the session of `root`, owned by this Neovim until it exits.
-- Returns true, or false and why it could not be written.
function M.remember(root, session_id)
  local ok, err = write(root, { version = M.VERSION, root = root, sessionId = session_id, pid = pid })
  if ok then
    owned[root] = session_id
    if not exit_hook then
      exit_hook = true
      vim.api.nvim_create_autocmd('VimLeavePre', {
        group = vim.api.nvim_create_augroup('dsh_sidecar_remembered', { clear = true }),
        callback = release_all,
      })
    end
  end
  return ok, err
end

M.release_all = release_all

return M

-- dsh/context/preview and dsh/scopes asked with compactPaths: the answer's files may leave out
-- `path` and `displayPath`, which the client works out from `scope` and `projectRoot`
-- (docs/protocol.md, "Compact paths"). A chain a thousand levels deep otherwise carries every
-- path three times. The plugin puts them back where the answer arrives, so whatever reads the
-- files (the commands, a chat plugin calling api.scopes) always sees full entries.

local M = {}

-- JSON null may arrive as nil or vim.NIL depending on the Neovim version.
local function missing(value)
  return value == nil or value == vim.NIL
end

-- The display path a scope key "<dir>\0<name>" names; "." is the project root. Split at the
-- first NUL only, with a plain find: a name may itself hold a slash (".claude/CLAUDE.md").
function M.display_path(scope)
  local nul = scope:find('\0', 1, true)
  local dir = nul and scope:sub(1, nul - 1) or scope
  local name = nul and scope:sub(nul + 1) or ''
  return dir == '.' and name or (dir .. '/' .. name)
end

-- One ScopeFile made whole in place. The server leaves a field out only when this rule gives
-- it back exactly, so a field that was sent (the user-global file's) is never touched.
local function expand_file(file, project_root)
  if type(file) ~= 'table' then
    return
  end
  if missing(file.displayPath) and type(file.scope) == 'string' then
    file.displayPath = M.display_path(file.scope)
  end
  if missing(file.path) and type(file.displayPath) == 'string' and type(project_root) == 'string' then
    file.path = project_root .. '/' .. file.displayPath
  end
end

-- A PreviewResult or ScopesResult with every file's `path` and `displayPath` back; returns the
-- same table (nil stays nil, so an error answer passes through).
function M.expand(result)
  if type(result) ~= 'table' or type(result.files) ~= 'table' then
    return result
  end
  for _, file in ipairs(result.files) do
    expand_file(file, result.projectRoot)
  end
  return result
end

-- The params of a request with compactPaths asked for, leaving the caller's table alone.
function M.ask(params)
  return vim.tbl_extend('force', params or {}, { compactPaths = true })
end

return M

-- The `dsh` settings tree as docs/configuration.md documents it, checked before it reaches the
-- sidecar. The sidecar refuses a whole tree that has one bad key (at initialize it would not
-- start at all), so each bad key is left out here instead: the sidecar then uses its default at
-- start, or keeps the value it had. tests/editors/test_nvim_plugin.py compares these verdicts
-- with the sidecar's own on the same values, and the keys with the documented table.

local M = {}

local MAX_SAFE_INTEGER = 2 ^ 53 - 1

local function is_null(v)
  return v == vim.NIL
end

-- vim.empty_dict() is a table that encodes as {}: not a list.
local EMPTY_DICT_MT = getmetatable(vim.empty_dict())

local function is_list(v)
  if type(v) ~= 'table' or (EMPTY_DICT_MT ~= nil and getmetatable(v) == EMPTY_DICT_MT) then
    return false
  end
  local n = 0
  for k in pairs(v) do
    if type(k) ~= 'number' then
      return false
    end
    n = n + 1
  end
  for i = 1, n do
    if v[i] == nil then
      return false
    end
  end
  return true
end

local function nonblank(v)
  return type(v) == 'string' and v:match('%S') ~= nil
end

local function integral(v, min, max)
  return type(v) == 'number' and v == v and v ~= math.huge and v ~= -math.huge and v == math.floor(v)
    and v >= min and v <= (max or MAX_SAFE_INTEGER)
end

local function all(list, pred)
  for _, item in ipairs(list) do
    if not pred(item) then
      return false
    end
  end
  return true
end

local function absolute_or_home(allow_bare_home)
  return function(v)
    return type(v) == 'string' and (v:sub(1, 1) == '/' or v:sub(1, 2) == '~/' or (allow_bare_home and v == '~'))
  end
end

local ZONEINFO = { '/usr/share/zoneinfo', '/usr/lib/zoneinfo', '/usr/share/lib/zoneinfo', '/etc/zoneinfo' }

-- An IANA name the system's time zone database has. Without a database on disk (the sidecar may
-- bring its own) any plausible name passes and the sidecar decides.
local function time_zone(v)
  if type(v) ~= 'string' or not v:match('^[%w_+-]+[%w_+/-]*$') or v:find('..', 1, true) then
    return false
  end
  local found_db = false
  for _, dir in ipairs(ZONEINFO) do
    if vim.fn.isdirectory(dir) == 1 then
      found_db = true
      if vim.fn.filereadable(dir .. '/' .. v) == 1 then
        return true
      end
    end
  end
  return not found_db
end

local function boolean()
  return { expected = 'true or false', check = function(v)
    return type(v) == 'boolean'
  end }
end

local function safe_integer(min, max)
  local expected = max and ('an integer from %d to %d'):format(min, max) or ('an integer >= %d'):format(min)
  return { expected = expected, check = function(v)
    return integral(v, min, max)
  end }
end

local function path_or_null()
  return { expected = 'a non-blank path, or vim.NIL', check = function(v)
    return is_null(v) or nonblank(v)
  end }
end

local function string_list(expected, item)
  item = item or function(v)
    return type(v) == 'string'
  end
  return { expected = expected, check = function(v)
    return is_list(v) and all(v, item)
  end }
end

local RULE_SETS = { copilot = true, claude = true, cursor = true }

-- section -> key -> { expected = text for the message, check = function(value) -> bool }
M.settings = {
  instructions = {
    enabled = boolean(),
    maxBytes = { expected = 'a number', check = function(v)
      return type(v) == 'number' and v == v and v ~= math.huge and v ~= -math.huge
    end },
    -- Unlike the others, any integral number: no safe-integer bound (as the sidecar reads it).
    maxSourceBytes = { expected = 'an integer >= 1', check = function(v)
      return integral(v, 1, math.huge)
    end },
    dshHome = path_or_null(),
    projectRootMarkers = string_list('a list of strings'),
    instructionFileCandidates = string_list('a list of strings'),
    localInstructionFileCandidates = string_list('a list of strings'),
    respectGitignore = boolean(),
    exclude = string_list('a list of gitignore-style patterns'),
    allowedSymlinkTargets = string_list('a list of absolute directories (or ~/...)', absolute_or_home(true)),
    overrideFiles = boolean(),
    imports = boolean(),
    ruleSets = { expected = 'a list of "copilot", "claude", "cursor", each at most once', check = function(v)
      if not is_list(v) then
        return false
      end
      local seen = {}
      for _, item in ipairs(v) do
        if not RULE_SETS[item] or seen[item] then
          return false
        end
        seen[item] = true
      end
      return true
    end },
    userGlobalFiles = string_list('a list of absolute file paths (or ~/...)', absolute_or_home(false)),
  },
  sessionReference = {
    enabled = boolean(),
    maxReferences = safe_integer(1, 3),
    candidateLimit = safe_integer(1),
    maxReferenceBytes = safe_integer(1),
  },
  timeContext = {
    enabled = boolean(),
    timeZone = { expected = 'an IANA time zone name (e.g. "Europe/Paris"), or vim.NIL', check = function(v)
      return is_null(v) or time_zone(v)
    end },
    refreshIntervalMs = safe_integer(0),
  },
  tmuxContext = {
    enabled = boolean(),
    refreshIntervalMs = safe_integer(0),
    useClientProcess = boolean(),
  },
  store = {
    path = path_or_null(),
    busyTimeoutMs = safe_integer(0),
  },
  hover = {
    otherFiles = { expected = '"off", "firstLine" or "always"', check = function(v)
      return v == 'off' or v == 'firstLine' or v == 'always'
    end },
  },
}

local function show(value)
  if is_null(value) then
    return 'vim.NIL'
  end
  local ok, text = pcall(vim.inspect, value, { newline = ' ', indent = '' })
  text = ok and text or tostring(value)
  return #text > 60 and (text:sub(1, 57) .. '...') or text
end

local function sorted_keys(t)
  local keys = vim.tbl_keys(t)
  table.sort(keys, function(a, b)
    return tostring(a) < tostring(b)
  end)
  return keys
end

-- Returns the tree without its invalid keys, and one problem per key left out:
-- { key = 'hover.otherFiles', value = <shown>, expected = '...' }.
function M.sanitize(settings)
  local problems = {}
  if settings == nil or is_null(settings) then
    return {}, problems
  end
  if type(settings) ~= 'table' then
    return {}, { { key = 'settings', value = show(settings), expected = 'a table of sections' } }
  end
  local clean = {}
  for _, section in ipairs(sorted_keys(settings)) do
    local raw = settings[section]
    local keys = M.settings[section]
    if not keys then
      local known = table.concat(sorted_keys(M.settings), ', ')
      table.insert(problems, { key = tostring(section), value = show(raw), expected = 'no such section (known: ' .. known .. ')' })
    elseif is_null(raw) then
      clean[section] = raw
    elseif type(raw) ~= 'table' or (is_list(raw) and next(raw) ~= nil) then
      table.insert(problems, { key = section, value = show(raw), expected = 'a table of settings' })
    else
      local out = {}
      for _, key in ipairs(sorted_keys(raw)) do
        local value = raw[key]
        local spec = keys[key]
        local name = section .. '.' .. tostring(key)
        if not spec then
          local known = table.concat(sorted_keys(keys), ', ')
          table.insert(problems, { key = name, value = show(value), expected = 'no such setting (known: ' .. known .. ')' })
        elseif spec.check(value) then
          out[key] = value
        else
          table.insert(problems, { key = name, value = show(value), expected = spec.expected })
        end
      end
      clean[section] = next(out) ~= nil and out or vim.empty_dict()
    end
  end
  return clean, problems
end

function M.describe(problem)
  return ('dsh_sidecar: setting %s = %s ignored, expected %s'):format(problem.key, problem.value, problem.expected)
end

return M

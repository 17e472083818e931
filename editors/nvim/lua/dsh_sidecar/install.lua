-- :DshInstall: a virtualenv under stdpath('data')/dsh_sidecar/venv with the sidecar installed
-- from this plugin's own checkout. A plugin manager clones the whole repository, so the Python
-- package (pyproject.toml, server/) sits two directories above editors/nvim. Runs as jobs, with
-- their output in a dsh://install buffer (b:dsh_status: 'running', then 'ready' or 'error'),
-- then starts the sidecars.

local config = require('dsh_sidecar.config')
local keymaps = require('dsh_sidecar.keymaps')

local M = {}

local running = false

function M.venv_dir()
  return vim.fn.stdpath('data') .. '/dsh_sidecar/venv'
end

-- The repository this plugin was loaded from, or nil, why.
function M.repo_root()
  local files = vim.api.nvim_get_runtime_file('lua/dsh_sidecar/install.lua', true)
  for _, file in ipairs(files) do
    -- <repo>/editors/nvim/lua/dsh_sidecar/install.lua
    local root = vim.fn.fnamemodify(file, ':p:h:h:h:h:h')
    if vim.fn.filereadable(root .. '/pyproject.toml') == 1 and vim.fn.isdirectory(root .. '/server/dsh_sidecar') == 1 then
      return root
    end
  end
  return nil, 'the plugin was not loaded from a dsh-sidecar checkout (no pyproject.toml and server/ two levels above editors/nvim): install the Python package yourself and set `python` in setup{}'
end

local function open_log()
  local buf = vim.fn.bufnr('dsh://install')
  if buf == -1 or not vim.api.nvim_buf_is_valid(buf) then
    buf = vim.api.nvim_create_buf(false, true)
    vim.api.nvim_buf_set_name(buf, 'dsh://install')
    vim.bo[buf].buftype = 'nofile'
    vim.bo[buf].bufhidden = 'hide'
    vim.bo[buf].swapfile = false
    keymaps.close_with_q(buf)
  end
  if vim.fn.bufwinid(buf) == -1 then
    vim.cmd('botright 12split')
    vim.api.nvim_win_set_buf(0, buf)
    vim.cmd('wincmd p')
  end
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, {})
  return buf
end

local function append(buf, lines)
  if not vim.api.nvim_buf_is_valid(buf) then
    return
  end
  local clean = {}
  for _, line in ipairs(lines) do
    -- pip draws progress bars with carriage returns; keep the last state of each line.
    line = line:gsub('.*\r', '')
    if line ~= '' then
      table.insert(clean, line)
    end
  end
  if #clean == 0 then
    return
  end
  local empty = vim.api.nvim_buf_line_count(buf) == 1 and vim.api.nvim_buf_get_lines(buf, 0, 1, false)[1] == ''
  vim.api.nvim_buf_set_lines(buf, empty and 0 or -1, -1, false, clean)
  local win = vim.fn.bufwinid(buf)
  if win ~= -1 then
    vim.api.nvim_win_set_cursor(win, { vim.api.nvim_buf_line_count(buf), 0 })
  end
end

-- Run the steps one after the other; cb(nil) after the last, cb(why) at the first failure.
local function run_steps(buf, steps, cb)
  local i = 0
  local function next_step()
    i = i + 1
    local step = steps[i]
    if not step then
      return cb(nil)
    end
    append(buf, { ('[%d/%d] %s'):format(i, #steps, step.title), '$ ' .. table.concat(step.argv, ' ') })
    local function collect(_, data)
      append(buf, data or {})
    end
    local ok, job = pcall(vim.fn.jobstart, step.argv, {
      on_stdout = collect,
      on_stderr = collect,
      on_exit = function(_, code)
        if code ~= 0 then
          return cb(('%s failed (exit %d)'):format(step.title, code))
        end
        next_step()
      end,
    })
    if not ok or job <= 0 then
      cb('cannot run ' .. step.argv[1])
    end
  end
  next_step()
end

function M.run()
  if running then
    vim.notify('dsh_sidecar: :DshInstall is already running (see dsh://install)', vim.log.levels.WARN)
    return
  end
  local root, why = M.repo_root()
  local buf = open_log()
  local function finish(status, message, level)
    running = false
    if vim.api.nvim_buf_is_valid(buf) then
      append(buf, { message })
      vim.api.nvim_buf_set_var(buf, 'dsh_status', status)
    end
    vim.notify('dsh_sidecar: ' .. message, level)
  end
  vim.api.nvim_buf_set_var(buf, 'dsh_status', 'running')
  if not root then
    return finish('error', why, vim.log.levels.ERROR)
  end
  local venv = M.venv_dir()
  local python = config.installed_python()
  local steps = {}
  if vim.fn.executable(python) ~= 1 then
    vim.fn.mkdir(vim.fn.fnamemodify(venv, ':h'), 'p')
    table.insert(steps, { title = 'create the virtualenv ' .. venv, argv = { config.get().install_python, '-m', 'venv', venv } })
  end
  -- Not editable: pip builds a wheel elsewhere, so the plugin's checkout stays clean for the
  -- plugin manager's updates; pip reinstalls from a directory every time, so running
  -- :DshInstall after an update installs the new version.
  table.insert(steps, {
    title = 'install dsh-sidecar from ' .. root,
    argv = { python, '-m', 'pip', 'install', '--disable-pip-version-check', root },
  })
  running = true
  append(buf, { 'dsh_sidecar: installing into ' .. venv })
  run_steps(buf, steps, function(err)
    if err then
      return finish('error', err .. ' (output above)', vim.log.levels.ERROR)
    end
    if config.options and not config.cmd_is_default() then
      return finish('ready', 'installed into ' .. venv .. ', but setup{} sets `python` or `cmd`, which stays in use', vim.log.levels.WARN)
    end
    require('dsh_sidecar').restart(function()
      finish('ready', 'installed into ' .. venv .. '; sidecar started', vim.log.levels.INFO)
    end)
  end)
end

return M

-- :checkhealth dsh_sidecar. Neovim 0.10+ has vim.health.{start,ok,...}; 0.8/0.9 the report_*
-- names on vim.health; 0.7 only the `health` Lua module over the health# autoload functions.

local M = {}

local function reporter()
  local h = vim.health
  if not (h and (h.start or h.report_start)) then
    h = require('health')
  end
  return {
    start = h.start or h.report_start,
    ok = h.ok or h.report_ok,
    info = h.info or h.report_info,
    warn = h.warn or h.report_warn,
    error = h.error or h.report_error,
  }
end

-- Run argv with a deadline; returns exit code (or nil on timeout) and the combined output.
local function run(argv, timeout_ms)
  local output = {}
  local function collect(_, data)
    for _, line in ipairs(data or {}) do
      if line ~= '' then
        table.insert(output, line)
      end
    end
  end
  local ok, job = pcall(vim.fn.jobstart, argv, { stdout_buffered = true, stderr_buffered = true, on_stdout = collect, on_stderr = collect })
  if not ok or job <= 0 then
    return nil, 'cannot run ' .. argv[1]
  end
  local code = vim.fn.jobwait({ job }, timeout_ms)[1]
  if code == -1 then
    vim.fn.jobstop(job)
    return nil, 'timed out after ' .. timeout_ms .. ' ms'
  end
  return code, table.concat(output, '\n')
end

function M.check()
  local report = reporter()
  local config = require('dsh_sidecar.config')
  local client = require('dsh_sidecar.client')
  local methods = require('dsh_sidecar.methods')
  local session = require('dsh_sidecar.session')

  report.start('dsh_sidecar: Neovim')
  if vim.fn.has('nvim-0.7') == 1 then
    local v = vim.version()
    report.ok(('Neovim %d.%d.%d, LSP client started with %s'):format(v.major, v.minor, v.patch, client.api_name))
  else
    report.error('Neovim 0.7 or newer is required')
  end
  if config.options then
    report.ok('setup() was called')
  else
    report.warn('setup() was not called: no sidecar starts on its own', { "require('dsh_sidecar').setup{}" })
  end

  report.start('dsh_sidecar: server command')
  local cmd = config.cmd()
  local fix = config.cmd_is_default() and ':DshInstall installs the sidecar from this plugin into ' .. require('dsh_sidecar.install').venv_dir()
    or 'install the dsh-sidecar package into that interpreter (see :help dsh_sidecar-install), then :DshRestart'
  if client.unavailable then
    report.error('no sidecar is started in this Neovim: ' .. client.unavailable.reason, { fix })
  end
  if vim.fn.executable(cmd[1]) ~= 1 then
    report.error('not executable: ' .. cmd[1], { fix })
  else
    -- `serve --help` imports the server without starting it: a cheap proof the install works.
    local argv = vim.list_extend(vim.deepcopy(cmd), { '--help' })
    local code, out = run(argv, 10000)
    if code == 0 then
      report.ok('`' .. table.concat(argv, ' ') .. '` runs')
    else
      report.error('`' .. table.concat(argv, ' ') .. '` failed: ' .. tostring(out), { fix })
    end
  end

  report.start('dsh_sidecar: sessions across restarts')
  if config.get().resume_sessions then
    report.ok('project sessions are resumed; their ids are kept in ' .. require('dsh_sidecar.remembered').dir())
  else
    report.info('resume_sessions is off: every start opens new sessions')
  end

  report.start('dsh_sidecar: running sidecars')
  local states = client.all()
  if #states == 0 then
    report.info('no sidecar running (none is started until a project buffer opens)')
  end
  for _, st in ipairs(states) do
    if st.failed then
      report.error(st.root .. ': ' .. client.format_error(st.failed))
    elseif not st.initialized then
      report.info(st.root .. ': starting')
    else
      local dsh = st.server and st.server.dsh
      if type(dsh) ~= 'table' then
        report.warn(st.root .. ': the server does not announce capabilities.experimental.dsh')
      elseif dsh.protocolVersion ~= methods.PROTOCOL_VERSION then
        report.warn(('%s: server speaks protocol %s, this plugin %d'):format(st.root, tostring(dsh.protocolVersion), methods.PROTOCOL_VERSION))
      else
        local offered = {}
        for _, name in ipairs(dsh.methods or {}) do
          offered[name] = true
        end
        local missing = vim.tbl_filter(function(name)
          return not offered[name]
        end, vim.list_extend(vim.deepcopy(methods.REQUESTS), methods.NOTIFICATIONS))
        if #missing == 0 then
          report.ok(('%s: client %d, protocol %d, all %d methods offered'):format(st.root, st.id, dsh.protocolVersion, #dsh.methods))
        else
          report.warn(st.root .. ': server lacks ' .. table.concat(missing, ', '))
        end
      end
      local project = session.project_info(st)
      if project and project.header then
        local how = project.resumed and 'resumed' or 'new'
        report.ok(('%s: project session %s (%s)'):format(st.root, project.header.id, how))
        if project.note then
          -- Why the remembered session was not resumed, or could not be remembered.
          report.info(st.root .. ': ' .. project.note)
        end
      elseif project and project.err then
        report.error(st.root .. ': no project session: ' .. client.format_error(project.err))
      end
    end
  end
end

return M

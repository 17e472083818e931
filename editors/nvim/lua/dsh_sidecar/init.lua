-- dsh-sidecar for Neovim: starts the sidecar language server for buffers inside a project and
-- exposes its session API to chat plugins. See :help dsh_sidecar.

local client = require('dsh_sidecar.client')
local config = require('dsh_sidecar.config')
local session = require('dsh_sidecar.session')

local M = {}

M.api = session.api

local augroup = 'dsh_sidecar'

local function wanted(bufnr)
  local filetypes = config.get().filetypes
  return filetypes == nil or vim.tbl_contains(filetypes, vim.bo[bufnr].filetype)
end

local function maybe_attach(bufnr)
  if wanted(bufnr) then
    session.attach(bufnr)
  end
end

-- Options: see config.lua and :help dsh_sidecar-setup. Calling setup again replaces the options
-- and pushes the new settings to running sidecars.
function M.setup(opts)
  local first = config.options == nil
  config.set(opts)
  if not first then
    client.push_settings()
  end

  vim.api.nvim_create_augroup(augroup, { clear = true })
  if config.get().autostart then
    -- With a filetype filter, FileType is the moment the filetype is known; without one, every
    -- buffer read or created from a file qualifies.
    local events = config.get().filetypes and { 'FileType' } or { 'BufReadPost', 'BufNewFile' }
    vim.api.nvim_create_autocmd(events, {
      group = augroup,
      callback = function(args)
        maybe_attach(args.buf)
      end,
    })
    -- Buffers loaded before setup ran (e.g. `nvim file` with setup in a lazy-loaded spec).
    for _, bufnr in ipairs(vim.api.nvim_list_bufs()) do
      if vim.api.nvim_buf_is_loaded(bufnr) then
        maybe_attach(bufnr)
      end
    end
  end
end

-- Replace the `dsh` settings tree at run time (workspace/didChangeConfiguration).
-- The sidecar checks each key: a bad one keeps its previous value, the rest applies, and
-- dsh/settings/didCheck names it (client.lua shows that once).
function M.configure(settings)
  config.set(vim.tbl_extend('force', config.options or {}, { settings = settings }))
  client.push_settings()
end

-- Stop every sidecar, forget that none could start, and start them again for the loaded
-- buffers (:DshRestart, and :DshInstall once it installed). cb() runs when they are asked to.
function M.restart(cb)
  client.restart(function()
    for _, bufnr in ipairs(vim.api.nvim_list_bufs()) do
      if vim.api.nvim_buf_is_loaded(bufnr) and client.buffer_path(bufnr) then
        maybe_attach(bufnr)
      end
    end
    if cb then
      cb()
    end
  end)
end

return M

-- User commands of dsh-sidecar. Starting the sidecar automatically is left to
-- require('dsh_sidecar').setup{}, so merely installing the plugin spawns no process.
if vim.g.loaded_dsh_sidecar then
  return
end
vim.g.loaded_dsh_sidecar = true

local function command(name, fn, desc)
  vim.api.nvim_create_user_command(name, function()
    require('dsh_sidecar.commands')[fn](vim.api.nvim_get_current_buf())
  end, { desc = desc })
end

command('DshPreview', 'preview', 'dsh: baseline instructions a new session here would get')
command('DshScopes', 'scopes', 'dsh: instruction chain of the current file, with states and sizes')
command('DshPending', 'pending', "dsh: context queued for the next step of this project's session")

vim.api.nvim_create_user_command('DshInstall', function()
  require('dsh_sidecar.install').run()
end, { desc = 'dsh: install the sidecar from this plugin into a virtualenv and start it' })
vim.api.nvim_create_user_command('DshRestart', function()
  require('dsh_sidecar').restart()
end, { desc = 'dsh: restart the sidecars (after fixing what kept them from starting)' })

-- K for hover before Neovim 0.10. From 0.10 on, Neovim maps K to vim.lsp.buf.hover() in every
-- buffer an LSP client with hover attaches to, unless the user maps K or set 'keywordprg'; older
-- versions leave K to 'keywordprg' (:Man), so K in an AGENTS.md would look up a man page.
-- We apply the same rule, buffer-locally, to the files whose hover says something: instruction
-- files always, other files only when the hover.otherFiles setting is on (the server answers
-- null there otherwise, and K in source files should stay what the user knows).

local config = require('dsh_sidecar.config')

local M = {}

M.needed = vim.fn.has('nvim-0.10') == 0

local function user_owns_key(bufnr, key)
  local taken = false
  vim.api.nvim_buf_call(bufnr, function()
    -- maparg sees the buffer-local mapping first, then a global one.
    taken = vim.fn.maparg(key, 'n', false, false) ~= ''
  end)
  if taken then
    return true
  end
  local keywordprg = vim.api.nvim_buf_get_option(bufnr, 'keywordprg')
  return keywordprg ~= '' and keywordprg ~= vim.api.nvim_get_option_info('keywordprg').default
end

local function wants_hover(bufnr)
  local name = vim.fn.fnamemodify(vim.api.nvim_buf_get_name(bufnr), ':t')
  return config.instruction_file_names()[name] or config.hovers_other_files()
end

-- Hover while an LSP client is attached; otherwise what K did before (the buffer may outlive
-- the sidecar, and 0.7 has no LspDetach to remove the mapping with).
local function hover_or_keywordprg()
  if next(vim.lsp.buf_get_clients(0)) ~= nil then
    vim.lsp.buf.hover()
  else
    vim.cmd('normal! ' .. (vim.v.count > 0 and vim.v.count or '') .. 'K')
  end
end

-- Called for every buffer the sidecar attaches to.
function M.on_attach(bufnr)
  local key = config.get().hover_key
  if not M.needed or not key or not vim.api.nvim_buf_is_valid(bufnr) then
    return
  end
  if vim.b[bufnr].dsh_hover_key or not wants_hover(bufnr) or user_owns_key(bufnr, key) then
    return
  end
  vim.keymap.set('n', key, hover_or_keywordprg, { buffer = bufnr, desc = 'dsh_sidecar: LSP hover' })
  vim.b[bufnr].dsh_hover_key = key
end

-- `q` closes a dsh:// buffer's window, as it does in many plugins' side windows; without the
-- mapping it starts recording a macro. Buffer-local (nowait: a user's `q...` mappings do not
-- make it wait). In the last window, where there is nothing to close, the buffer shown before
-- takes its place (or an empty one).
function M.close_with_q(bufnr)
  vim.keymap.set('n', 'q', function()
    if pcall(vim.cmd, 'close') then
      return
    end
    if not pcall(vim.cmd, 'buffer #') then
      vim.cmd('enew')
    end
  end, { buffer = bufnr, nowait = true, silent = true, desc = 'dsh_sidecar: close this window' })
end

return M

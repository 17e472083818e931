-- mychat: a stand-in for a chat plugin, so the integration example of docs/editors/neovim.md runs
-- against something with the shape of the real ones: it keeps a conversation, sends it to a model
-- provider step by step, runs the tools the model asks for, and calls hooks around each of those
-- moments. The tests give it a scripted provider; it has no UI.
--
--   require('mychat').setup({ provider = fn(request) -> response, hooks = {...} })
--   require('mychat').ask(text) -> the model's last answer
--
-- request  = { turn, step, prompt (step 1 only), messages }   messages: the conversation itself,
--            { role = 'user'|'assistant'|'tool', content, tool_calls?, tool_call_id? }; a hook may
--            add to it, and what it adds stays in the conversation
-- response = { content, tool_calls = { { id, name, arguments } }? }
-- hooks    = on_request(request), on_response(request, response),
--            on_tool_result(request, call, result = { output, is_error }),
--            on_step_end(request), on_turn_end(turn, reason)

local M = {}

local options = { hooks = {} }
local conversation = {}
local turns = 0
local MAX_STEPS = 8

function M.setup(opts)
  opts = opts or {}
  options.provider = opts.provider or options.provider
  options.hooks = vim.tbl_extend('force', options.hooks, opts.hooks or {})
end

local function hook(name, ...)
  local fn = options.hooks[name]
  if fn then
    fn(...)
  end
end

local function read_file(args)
  local handle = assert(io.open(args.path, 'rb'))
  local text = handle:read('*a')
  handle:close()
  return text
end

local function write_file(args)
  local handle = assert(io.open(args.path, 'wb'))
  handle:write(args.content)
  handle:close()
  return 'wrote ' .. #args.content .. ' bytes'
end

M.tools = { read_file = read_file, write_file = write_file }

function M.ask(prompt)
  assert(options.provider, 'mychat: no provider configured')
  turns = turns + 1
  table.insert(conversation, { role = 'user', content = prompt })
  local response
  for step = 1, MAX_STEPS do
    local request = { turn = turns, step = step, prompt = step == 1 and prompt or nil, messages = conversation }
    hook('on_request', request)
    response = options.provider(request)
    table.insert(conversation, { role = 'assistant', content = response.content, tool_calls = response.tool_calls })
    hook('on_response', request, response)
    for _, call in ipairs(response.tool_calls or {}) do
      local ok, output = false, 'unknown tool ' .. tostring(call.name)
      if M.tools[call.name] then
        ok, output = pcall(M.tools[call.name], call.arguments)
      end
      local result = { output = ok and output or ('error: ' .. tostring(output)), is_error = not ok }
      table.insert(conversation, { role = 'tool', tool_call_id = call.id, content = result.output })
      hook('on_tool_result', request, call, result)
    end
    hook('on_step_end', request)
    if not response.tool_calls or #response.tool_calls == 0 then
      break
    end
  end
  hook('on_turn_end', turns, 'stop')
  return response.content
end

function M.conversation()
  return conversation
end

return M

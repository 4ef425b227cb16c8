-- Anchorage push hook for Dovecot 2.3 (the push_notification plugin's Lua driver).
--
-- After each committed mail transaction that changed a mailbox some device registered, it POSTs
--   {"user": "...", "mailboxes": [{"mailbox": "Notes", "uidvalidity": N, "highestmodseq": N,
--                                  "registrations": {"<deviceToken>": "account=<account> device=<deviceToken> token=<token>"}}]}
-- to push_lua_url (the push server's /push/mail), with HTTP Basic credentials push_lua_user and push_lua_password.
-- A device registers a mailbox by storing, in that mailbox's METADATA,
--   /private/vendor/vendor.anchorage/push/<deviceToken> = "account=<account> device=<deviceToken> token=<token>"
-- (Dovecot lower-cases the entry's name, so the value carries the device's exact name; the push
-- server takes device= over the key.)
-- Both settings may be set per user (userdb extra fields) or in the plugin { } block.
local client
local PREFIX = "/private/vendor/vendor.anchorage/push/"

local function jstr(s)
  return '"' .. tostring(s):gsub('[%c"\\]', function(c)
    if c == '"' then return '\\"' elseif c == "\\" then return "\\\\" end
    return string.format("\\u%04x", c:byte())
  end) .. '"'
end

local B64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
local function base64(data)
  return ((data:gsub(".", function(x)
    local bits, byte = "", x:byte()
    for i = 8, 1, -1 do bits = bits .. (byte % 2 ^ i - byte % 2 ^ (i - 1) > 0 and "1" or "0") end
    return bits
  end) .. "0000"):gsub("%d%d%d?%d?%d?%d?", function(x)
    if #x < 6 then return "" end
    local c = 0
    for i = 1, 6 do c = c + (x:sub(i, i) == "1" and 2 ^ (6 - i) or 0) end
    return B64:sub(c + 1, c + 1)
  end) .. ({"", "==", "="})[#data % 3 + 1])
end

-- Status numbers arrive as floats.
local function int(x) return string.format("%d", math.floor(tonumber(x) or 0)) end

function script_init()
  -- Small timeouts: the IMAP command that made the change waits for this request.
  client = dovecot.http.client({request_timeout_msecs = 500, max_attempts = 1})
  return 0
end

function dovecot_lua_notify_begin_txn(user)
  return {user = user, url = user:plugin_getenv("push_lua_url"),
          push_user = user:plugin_getenv("push_lua_user"), push_password = user:plugin_getenv("push_lua_password"), boxes = {}, order = {}}
end

local function changed(ctx, e)
  local name = e.mailbox
  if name ~= nil and not ctx.boxes[name] then
    ctx.boxes[name] = true
    table.insert(ctx.order, name)
  end
end
dovecot_lua_notify_event_message_new = changed
dovecot_lua_notify_event_message_append = changed
dovecot_lua_notify_event_message_expunge = changed
dovecot_lua_notify_event_flags_set = changed
dovecot_lua_notify_event_flags_clear = changed
dovecot_lua_notify_event_mailbox_create = changed
dovecot_lua_notify_event_mailbox_rename = changed -- e.mailbox is the new name; METADATA moves with it

-- The JSON of one changed mailbox, or nil when no device registered it.
local function describe(user, name)
  local box = user:mailbox(name)
  local ok, result = pcall(function()
    box:sync()
    local parts = {}
    for key, value in pairs(box:metadata_list(PREFIX) or {}) do
      parts[#parts + 1] = jstr(key:sub(#PREFIX + 1)) .. ":" .. jstr(value)
    end
    if #parts == 0 then return nil end
    local st = box:status(dovecot.storage.STATUS_UIDVALIDITY, dovecot.storage.STATUS_HIGHESTMODSEQ)
    return '{"mailbox":' .. jstr(name) .. ',"uidvalidity":' .. int(st.uidvalidity) ..
           ',"highestmodseq":' .. int(st.highest_modseq) .. ',"registrations":{' .. table.concat(parts, ",") .. "}}"
  end)
  box:free()
  if not ok then
    dovecot.i_error("anchorage push: reading " .. name .. ": " .. tostring(result))
    return nil
  end
  return result
end

function dovecot_lua_notify_end_txn(ctx, success)
  if #ctx.order == 0 or ctx.url == nil or ctx.url == "" then return end
  local items = {}
  for _, name in ipairs(ctx.order) do
    local item = describe(ctx.user, name)
    if item ~= nil then items[#items + 1] = item end
  end
  if #items == 0 then return end -- nobody registered these mailboxes
  local req = client:request({url = ctx.url, method = "POST"})
  req:add_header("Content-Type", "application/json")
  if ctx.push_user ~= nil and ctx.push_user ~= "" then
    req:add_header("Authorization", "Basic " .. base64(ctx.push_user .. ":" .. (ctx.push_password or "")))
  end
  req:set_payload('{"user":' .. jstr(ctx.user.username) .. ',"mailboxes":[' .. table.concat(items, ",") .. "]}")
  local resp = req:submit() -- blocking; 9003 = connect failed, 9008 = timed out
  if resp:status() < 200 or resp:status() > 299 then
    dovecot.i_error("anchorage push: " .. ctx.url .. " answered " .. tostring(resp:status()) .. " " .. resp:reason())
  end
end

#!/bin/sh
# memrag's OpenAI-compatible chat completions with curl. Against a started server:
#   MEMRAG_URL=http://127.0.0.1:3000 [MEMRAG_API_KEY=…] sh examples/chat-completions.sh
set -eu
URL="${MEMRAG_URL:-http://127.0.0.1:3000}"
AUTH="Authorization: Bearer ${MEMRAG_API_KEY:-none}"

# The agents, as models: "memrag" and "memrag:<agentId>".
curl -sf "$URL/v1/models" -H "$AUTH"
echo

# A completion for the user ada: her memories and past turns are recalled and cited (`memrag.citations`).
curl -sf "$URL/v1/chat/completions" -H "$AUTH" -H 'content-type: application/json' -d '{
  "model": "memrag",
  "user": "ada",
  "messages": [{"role": "user", "content": "What do I drink in the morning?"}]
}'
echo

# Streamed: chat.completion.chunk frames, the usage last, then data: [DONE].
curl -sfN "$URL/v1/chat/completions" -H "$AUTH" -H 'content-type: application/json' -d '{
  "model": "memrag",
  "user": "ada",
  "stream": true,
  "stream_options": {"include_usage": true},
  "messages": [{"role": "user", "content": "What do I drink in the morning?"}]
}'

// Reads one streamed response through the proxy with an official Node SDK and prints, as one JSON
// line, what an application sees: the calls (joined as the SDK's users join them) or the error.
// Usage: node read_stream.cjs openai_chat|anthropic BASE_URL KEY
"use strict";

const [format, baseURL, apiKey] = process.argv.slice(2);

async function openaiChat() {
  const OpenAI = require("openai");
  const client = new OpenAI({ baseURL: baseURL + "/v1", apiKey, maxRetries: 0 });
  const stream = await client.chat.completions.create({ model: "m", messages: [], stream: true });
  const calls = {};
  for await (const chunk of stream) {
    for (const choice of chunk.choices) {
      for (const delta of choice.delta.tool_calls || []) {
        const call = (calls[delta.index] ||= { id: "", name: "", arguments: "" });
        call.id += delta.id || "";
        call.name += (delta.function && delta.function.name) || "";
        call.arguments += (delta.function && delta.function.arguments) || "";
      }
    }
  }
  return { calls };
}

async function anthropic() {
  const Anthropic = require("@anthropic-ai/sdk");
  const client = new (Anthropic.default || Anthropic)({ baseURL, apiKey, maxRetries: 0 });
  const stream = client.messages.stream({ model: "m", max_tokens: 100, messages: [] });
  const message = await stream.finalMessage();
  return { calls: message.content.filter((b) => b.type === "tool_use").map((b) => [b.id, b.name, b.input]) };
}

(format === "anthropic" ? anthropic() : openaiChat())
  .then((result) => console.log(JSON.stringify(result)))
  .catch((error) => console.log(JSON.stringify({ error: error.constructor.name, status: error.status ?? null, message: error.message })));

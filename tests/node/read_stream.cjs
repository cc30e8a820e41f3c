// Reads one streamed response through the proxy with an official Node SDK and prints, as one JSON
// line, what an application sees: the calls (joined as the SDK's users join them) or the error.
// Usage: node read_stream.cjs openai_chat|openai_chat_accumulated|anthropic BASE_URL KEY [TOOLS]
// TOOLS: OpenAI Chat tools as JSON, sent with the request (as Anthropic tools for anthropic).
// openai_chat_accumulated reads with the SDK's own accumulator (chat.completions.stream): the calls
// are those it completed (its arguments.done events), and its final completion's.
"use strict";

const [format, baseURL, apiKey, toolsJSON] = process.argv.slice(2);
const tools = toolsJSON ? JSON.parse(toolsJSON) : undefined;
const anthropicTools = tools && tools.map((t) => ({ name: t.function.name, input_schema: t.function.parameters }));

async function openaiChatAccumulated() {
  const OpenAI = require("openai");
  const client = new OpenAI({ baseURL: baseURL + "/v1", apiKey, maxRetries: 0 });
  const done = [];
  const stream = client.chat.completions.stream({ model: "m", messages: [], tools });
  stream.on("tool_calls.function.arguments.done", (event) => done.push([event.index, event.name, event.arguments]));
  try {
    const final = await stream.finalChatCompletion();
    const calls = (final.choices[0].message.tool_calls || []).map((c) => [c.id, c.function.name, c.function.arguments]);
    return { done, calls };
  } catch (error) {
    return { done, error: error.constructor.name, message: error.message };
  }
}

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
  const stream = client.messages.stream({ model: "m", max_tokens: 100, messages: [], tools: anthropicTools });
  const message = await stream.finalMessage();
  return { calls: message.content.filter((b) => b.type === "tool_use").map((b) => [b.id, b.name, b.input]) };
}

const readers = { anthropic, openai_chat: openaiChat, openai_chat_accumulated: openaiChatAccumulated };
readers[format]()
  .then((result) => console.log(JSON.stringify(result)))
  .catch((error) => console.log(JSON.stringify({ error: error.constructor.name, status: error.status ?? null, message: error.message })));

// Runs the Vercel AI SDK's own agent loop (streamText with tools and stopWhen) against BASE_URL and
// prints, as one JSON line, what the application saw: the tools that ran with their arguments, the
// tools whose input the SDK itself found bad (it hands the model the error), the steps, and how the run ended.
// Usage: node agent_loop.mjs openai_chat|anthropic BASE_URL KEY MODULES
// BASE_URL ends in /v1 (the proxy's, or the upstream's own); MODULES is the node_modules holding ai.
import { createRequire } from "node:module";
import { pathToFileURL } from "node:url";

const [format, baseURL, apiKey, modules] = process.argv.slice(2);
const resolve = createRequire(modules + "/").resolve;
const load = (name) => import(pathToFileURL(resolve(name)).href);

const { streamText, stepCountIs, tool } = await load("ai");
const { z } = await load("zod");
const ran = [];
const recorded = (name, answer) => async (input) => {
  ran.push([name, input]);
  return answer(input);
};
const tools = {
  get_weather: tool({
    description: "The weather in a city.",
    inputSchema: z.object({ city: z.string() }),
    execute: recorded("get_weather", ({ city }) => `sunny in ${city}`),
  }),
  get_stock: tool({
    description: "A stock's price.",
    inputSchema: z.object({ ticker: z.string() }),
    execute: recorded("get_stock", ({ ticker }) => `${ticker} at 182.5`),
  }),
  write_file: tool({
    description: "Write a file.",
    inputSchema: z.object({ path: z.string(), content: z.string() }),
    execute: recorded("write_file", () => "written"),
  }),
  read_file: tool({
    description: "Read a file.",
    inputSchema: z.object({ path: z.string() }),
    execute: recorded("read_file", ({ path }) => `the text of ${path}`),
  }),
};

async function model() {
  if (format === "anthropic") {
    const { createAnthropic } = await load("@ai-sdk/anthropic");
    return createAnthropic({ baseURL, apiKey })("claude-sonnet-4-5");
  }
  const { createOpenAI } = await load("@ai-sdk/openai");
  return createOpenAI({ baseURL, apiKey }).chat("gpt-4.1");
}

const toolErrors = [];
let failure = null;
const result = streamText({
  model: await model(),
  tools,
  prompt: "Weather in Paris, and AAPL?",
  stopWhen: stepCountIs(4),
  maxRetries: 0,
  onError: ({ error }) => {
    failure = { name: error.constructor.name, message: String(error.message) };
  },
});
for await (const part of result.fullStream) {
  if (part.type === "tool-error") toolErrors.push(part.toolName);
}
const out = { ran, toolErrors };
if (failure) {
  out.error = failure;
} else {
  out.steps = (await result.steps).map((step) => step.finishReason);
  out.text = await result.text;
}
process.stdout.write(JSON.stringify(out) + "\n");

// The Vercel AI SDK: generateText with a tool and stopWhen: stepCountIs(5), once through @ai-sdk/openai
// (the Responses API) and once through @ai-sdk/anthropic (the Messages API), both at the proxy.
const { generateText, tool, stepCountIs } = require("ai");
const { createOpenAI } = require("@ai-sdk/openai");
const { createAnthropic } = require("@ai-sdk/anthropic");
const { z } = require("zod");
const WEATHER = { 北京: "晴", 上海: "多云" };

async function session(model, question) {
  const getWeather = tool({ description: "The weather of a city.", inputSchema: z.object({ city: z.string() }),
                            execute: async ({ city }) => WEATHER[city] ?? "未知" });
  const result = await generateText({ model, prompt: question, tools: { get_weather: getWeather },
                                      stopWhen: stepCountIs(5), maxRetries: 0 });
  return { text: result.text, steps: result.steps.map((step) => step.toolCalls.map((c) => [c.toolName, c.input])) };
}

(async () => {
  const base = process.env.TRACEKIT_PROXY_URL;
  const openai = createOpenAI({ baseURL: base + "/v1", apiKey: process.env.OPENAI_API_KEY });
  const anthropic = createAnthropic({ baseURL: base + "/v1", apiKey: process.env.ANTHROPIC_API_KEY });
  const out = [await session(openai("gpt-test"), "北京天气怎么样？"),
               await session(anthropic("claude-test"), "上海天气怎么样？")];
  process.stdout.write(JSON.stringify(out) + "\n");
})().catch((error) => { console.error(error); process.exit(1); });

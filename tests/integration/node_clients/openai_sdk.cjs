// The OpenAI Node SDK in a Chat Completions tool loop against OPENAI_BASE_URL: one session with
// chat.completions.create, one streamed (stream: true, chunks gathered by the SDK's stream helper).
const sdk = require("openai");
const OpenAI = sdk.default ?? sdk;
const WEATHER = { 北京: "晴", 上海: "多云" };
const TOOLS = [{ type: "function", function: { name: "get_weather", description: "The weather of a city.",
  parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] } } }];

async function session(client, question, stream) {
  const messages = [{ role: "user", content: question }];
  const seen = [];
  for (let turn = 0; turn < 5; turn++) {
    const params = { model: "gpt-test", tools: TOOLS, messages };
    const message = stream
      ? (await client.chat.completions.stream(params).finalChatCompletion()).choices[0].message
      : (await client.chat.completions.create(params)).choices[0].message;
    seen.push({ content: message.content ?? null, tool_calls: message.tool_calls ?? [] });
    messages.push({ role: "assistant", content: message.content ?? null, tool_calls: message.tool_calls });
    const calls = message.tool_calls ?? [];
    if (calls.length === 0) return seen;
    for (const call of calls) {
      const city = JSON.parse(call.function.arguments).city;
      messages.push({ role: "tool", tool_call_id: call.id, content: WEATHER[city] ?? "未知" });
    }
  }
  return seen;
}

(async () => {
  const client = new OpenAI({ maxRetries: 0 });
  const out = [await session(client, "北京天气怎么样？", false), await session(client, "上海天气怎么样？", true)];
  process.stdout.write(JSON.stringify(out) + "\n");
})().catch((error) => { console.error(error); process.exit(1); });

// One run of an OpenAI Agents SDK agent (@openai/agents) in a process of its own, its session kept
// by OpenAIConversationsSession on the server at MGPT_URL. Prints { output, conversation } as JSON.
// The test runs a copy of this file placed beside the test clients' own node_modules
// (test/helpers/clients.ts), so the SDK and the openai and zod it was built with resolve from there.
import { Agent, run, setDefaultOpenAIClient, setOpenAIAPI, setTracingDisabled, tool } from '@openai/agents';
import { OpenAIConversationsSession } from '@openai/agents-openai';
import OpenAI from 'openai';
import { z } from 'zod';

const [input, conversationId] = process.argv.slice(2);
setTracingDisabled(true);
const client = new OpenAI({ apiKey: process.env.MGPT_KEY, baseURL: `${process.env.MGPT_URL}/v1`, maxRetries: 0 });
setDefaultOpenAIClient(client);
setOpenAIAPI('responses');
const weather = tool({
  name: 'weather',
  description: 'the weather in a city',
  parameters: z.object({ city: z.string() }),
  execute: async ({ city }) => JSON.stringify({ city, celsius: -3 }),
});
const agent = new Agent({ name: 'forecaster', model: process.env.MGPT_MODEL ?? 'mgpt-1-27b', instructions: 'Answer in one line.', tools: [weather] });
const session = new OpenAIConversationsSession({ client, ...(conversationId ? { conversationId } : {}) });
const result = await run(agent, input, { session });
console.log(JSON.stringify({ output: result.finalOutput, conversation: await session.getSessionId() }));

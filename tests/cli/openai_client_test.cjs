// hetero serve through the official `openai` npm client: models, chat and
// completions (streamed and not), chat log-probabilities, concurrent
// streams, an aborted stream, the client's typed errors for a too-long
// prompt, a refused field (with its param) and a wrong API key, a tool-call
// round trip, any model
// name answered, CORS (a preflight and the header on replies), and the
// samplers beyond OpenAI's (min_p, repetition_penalty) with penalties,
// logit_bias and seeds. The client sends only the fields it is given.
// Usage: node openai_client_test.cjs NODE_MODULES_PARENT BASE_URL MODEL API_KEY
const path = require('path');
const [dir, baseURL, model, apiKey] = process.argv.slice(2);
const mod = require(path.join(dir, 'node_modules', 'openai'));
const OpenAI = mod.OpenAI || mod.default || mod;

let failed = false;
function check(name, ok, detail) {
  console.log((ok ? 'ok   ' : 'FAIL ') + name + (ok || detail === undefined ? '' : `\n     ${detail}`));
  if (!ok) failed = true;
}

const client = new OpenAI({ baseURL: baseURL + '/v1', apiKey, maxRetries: 0, timeout: 60000 });
const chatArgs = (content, extra = {}) => ({ model, messages: [{ role: 'user', content }], max_tokens: 12, temperature: 0, ...extra });

async function streamText(stream, field) {
  let text = '', finish = null, chunks = 0;
  for await (const chunk of stream) {
    chunks++;
    const c = chunk.choices[0];
    if (c) {
      text += field === 'text' ? (c.text || '') : (c.delta?.content || '');
      if (c.finish_reason) finish = c.finish_reason;
    }
  }
  return { text, finish, chunks };
}

async function expectError(name, fn, cls, status, code, param) {
  try {
    await fn();
    check(name, false, 'no error');
  } catch (e) {
    check(name, e instanceof cls && e.status === status && (code === undefined || e.code === code) && (param === undefined || e.param === param),
          `${e.constructor.name} status ${e.status} code ${e.code} param ${e.param}: ${e.message}`);
  }
}

(async () => {
  const models = await client.models.list();
  check('models.list names the model', models.data.some((m) => m.id === model), JSON.stringify(models.data));
  const one = await client.models.retrieve(model);
  check('models.retrieve', one.id === model && one.object === 'model', JSON.stringify(one));
  await expectError('models.retrieve of an unknown model -> NotFoundError 404', () => client.models.retrieve('no-such-model'), OpenAI.NotFoundError, 404);

  const chat = await client.chat.completions.create(chatArgs('Hello'));
  const reply = chat.choices[0].message.content;
  check('chat.completions.create', chat.object === 'chat.completion' && reply.length > 0 && chat.choices[0].finish_reason === 'length' &&
        chat.usage.completion_tokens === 12, JSON.stringify(chat));
  const streamed = await streamText(await client.chat.completions.create(chatArgs('Hello', { stream: true })), 'delta');
  check('chat.completions.create stream: same text', streamed.text === reply && streamed.finish === 'length' && streamed.chunks >= 3,
        JSON.stringify(streamed));

  const withLogprobs = await client.chat.completions.create(chatArgs('Hello', { logprobs: true, top_logprobs: 2 }));
  const entries = withLogprobs.choices[0].logprobs?.content || [];
  check('chat.completions.create with logprobs: a token each, greedy on top',
        entries.length === 12 && entries.map((e) => e.token).join('') === reply &&
        entries.every((e) => e.top_logprobs.length === 2 && e.top_logprobs[0].token === e.token && e.logprob <= 0),
        JSON.stringify(withLogprobs.choices[0].logprobs));

  const comp = await client.completions.create({ model, prompt: 'Once upon a time', max_tokens: 10, temperature: 0 });
  const text = comp.choices[0].text;
  check('completions.create', comp.object === 'text_completion' && text.length > 0 && comp.usage.completion_tokens === 10, JSON.stringify(comp));
  const compStream = await streamText(await client.completions.create({ model, prompt: 'Once upon a time', max_tokens: 10, temperature: 0, stream: true }), 'text');
  check('completions.create stream: same text', compStream.text === text, JSON.stringify(compStream));

  const [a, b] = await Promise.all([
    client.chat.completions.create(chatArgs('Hello', { stream: true })).then((s) => streamText(s, 'delta')),
    client.completions.create({ model, prompt: 'Once upon a time', max_tokens: 10, temperature: 0, stream: true }).then((s) => streamText(s, 'text')),
  ]);
  check('two concurrent streams get their own answers', a.text === reply && b.text === text, JSON.stringify([a.text, b.text]));

  // Abort a long stream after a few chunks; the next request must not wait for it.
  const long = await client.chat.completions.create({ model, messages: [{ role: 'user', content: 'Go on forever' }], temperature: 0, stream: true });
  let seen = 0;
  for await (const chunk of long) {
    if (++seen === 5) { long.controller.abort(); break; }
  }
  const t0 = Date.now();
  const after = await client.completions.create({ model, prompt: 'Once upon a time', max_tokens: 10, temperature: 0 });
  const waited = (Date.now() - t0) / 1000;
  console.log(`     request after the aborted stream answered in ${waited.toFixed(2)} s`);
  check('an aborted stream stops; the next request is answered at once', seen === 5 && after.choices[0].text === text && waited < 5);

  const anyName = await client.chat.completions.create({ ...chatArgs('Hello'), model: 'gpt-4o' });
  check('any model name is answered by the one model served, named in the reply', anyName.model === model && anyName.choices[0].message.content === reply,
        JSON.stringify(anyName));
  await expectError('a field hetero does not implement -> BadRequestError 400 naming it', () => client.chat.completions.create(chatArgs('hi', { frobnicate: true })),
                    OpenAI.BadRequestError, 400, undefined, 'frobnicate');
  await expectError('tool_choice required without tools -> BadRequestError 400 param tool_choice',
                    () => client.chat.completions.create(chatArgs('hi', { tool_choice: 'required' })),
                    OpenAI.BadRequestError, 400, undefined, 'tool_choice');
  // Tool calling (the server runs a Qwen 2.5 tool template): a required call read from tool_calls, its result sent back.
  const tools = [{ type: 'function', function: { name: 'get_weather', description: 'The weather in a city.',
                   parameters: { type: 'object', additionalProperties: false, required: ['city', 'unit'],
                                 properties: { city: { type: 'string', maxLength: 10 }, unit: { enum: ['c', 'f'] } } } } }];
  const asked = [{ role: 'user', content: 'Weather in Bern?' }];
  const calling = await client.chat.completions.create({ model, messages: asked, tools, tool_choice: 'required', parallel_tool_calls: false,
                                                         max_tokens: 200, temperature: 0.8, seed: 3 });
  const call = calling.choices[0].message.tool_calls?.[0];
  let args = null;
  try { args = JSON.parse(call.function.arguments); } catch (e) { args = null; }
  check('tool_choice required: one call of get_weather whose arguments fit its schema (finish_reason tool_calls)',
        calling.choices[0].message.tool_calls.length === 1 && calling.choices[0].message.content === null && /^call_/.test(call.id) &&
        call.type === 'function' && call.function.name === 'get_weather' && args !== null && typeof args.city === 'string' &&
        args.city.length <= 10 && ['c', 'f'].includes(args.unit) && Object.keys(args).length === 2 &&
        calling.choices[0].finish_reason === 'tool_calls', JSON.stringify(calling.choices[0]));
  const callStream = await client.chat.completions.create({ model, messages: asked, tools, tool_choice: 'required', parallel_tool_calls: false,
                                                            max_tokens: 200, temperature: 0.8, seed: 3, stream: true });
  const streamedCalls = [];
  let callFinish = null;
  for await (const chunk of callStream) {
    for (const d of chunk.choices[0]?.delta?.tool_calls || []) {
      streamedCalls[d.index] ??= { id: d.id, name: d.function?.name, arguments: '' };
      streamedCalls[d.index].arguments += d.function?.arguments || '';
    }
    callFinish = chunk.choices[0]?.finish_reason || callFinish;
  }
  check('the same call streamed (delta.tool_calls by index)', streamedCalls.length === 1 && streamedCalls[0].name === 'get_weather' &&
        streamedCalls[0].arguments === call.function.arguments && /^call_/.test(streamedCalls[0].id) && callFinish === 'tool_calls',
        JSON.stringify(streamedCalls));
  const answered = await client.chat.completions.create({ model, tools, max_tokens: 8, temperature: 0, messages: [
    ...asked, calling.choices[0].message, { role: 'tool', tool_call_id: call.id, content: '{"temperature": 21}' }] });
  check('the tool result sent back is answered', answered.choices[0].message.content.length > 0 && answered.usage.prompt_tokens > calling.usage.prompt_tokens,
        JSON.stringify(answered));
  // Structured output: a JSON-schema reply that parses and validates, even from a story model.
  const schema = { type: 'object', additionalProperties: false, required: ['name', 'mood', 'age'],
                   properties: { name: { type: 'string', maxLength: 10 }, mood: { enum: ['happy', 'sad'] }, age: { type: 'integer' } } };
  const structured = await client.chat.completions.create(chatArgs('Describe a cat', {
    max_tokens: 400, response_format: { type: 'json_schema', json_schema: { name: 'cat', strict: true, schema } } }));
  let parsed = null;
  try { parsed = JSON.parse(structured.choices[0].message.content); } catch (e) { parsed = null; }
  check('a json_schema reply parses and validates (finish_reason stop)',
        parsed !== null && Object.keys(parsed).sort().join() === 'age,mood,name' && typeof parsed.name === 'string' && parsed.name.length <= 10 &&
        ['happy', 'sad'].includes(parsed.mood) && Number.isInteger(parsed.age) && structured.choices[0].finish_reason === 'stop',
        JSON.stringify(structured.choices[0]));
  await expectError('a schema keyword that is not enforced (pattern) -> BadRequestError 400 param response_format',
                    () => client.chat.completions.create(chatArgs('hi', { response_format: { type: 'json_schema',
                      json_schema: { name: 'x', schema: { type: 'string', pattern: '^a' } } } })),
                    OpenAI.BadRequestError, 400, undefined, 'response_format');
  await expectError('prompt longer than the context -> BadRequestError 400 context_length_exceeded',
                    () => client.completions.create({ model, prompt: 'word '.repeat(3000) }), OpenAI.BadRequestError, 400, 'context_length_exceeded');
  await expectError('bad parameter -> BadRequestError 400', () => client.chat.completions.create(chatArgs('hi', { temperature: 7 })),
                    OpenAI.BadRequestError, 400);
  // The API key: a client with another key is refused; /health needs none.
  const stranger = new OpenAI({ baseURL: baseURL + '/v1', apiKey: apiKey + '-not', maxRetries: 0, timeout: 60000 });
  await expectError('a wrong API key -> AuthenticationError 401 invalid_api_key', () => stranger.models.list(), OpenAI.AuthenticationError, 401, 'invalid_api_key');
  await expectError('a wrong API key on a completion -> AuthenticationError 401', () => stranger.chat.completions.create(chatArgs('hi')),
                    OpenAI.AuthenticationError, 401, 'invalid_api_key');
  const health = await fetch(baseURL + '/health');
  check('/health needs no key', health.status === 200);

  // CORS, as a browser would ask: a preflight, then the header on the reply.
  const preflight = await fetch(baseURL + '/v1/chat/completions', {
    method: 'OPTIONS',
    headers: { Origin: 'http://page.example', 'Access-Control-Request-Method': 'POST', 'Access-Control-Request-Headers': 'authorization,content-type,x-stainless-os' },
  });
  check('CORS preflight: 204, POST allowed, the asked headers (Authorization among them) allowed, any origin',
        preflight.status === 204 && preflight.headers.get('access-control-allow-methods').includes('POST') &&
        preflight.headers.get('access-control-allow-headers') === 'authorization,content-type,x-stainless-os' &&
        preflight.headers.get('access-control-allow-origin') === '*',
        `${preflight.status} ${JSON.stringify([...preflight.headers.entries()])}`);
  const { response } = await client.chat.completions.create(chatArgs('Hello')).withResponse();
  check('replies carry Access-Control-Allow-Origin', response.headers.get('access-control-allow-origin') === '*');

  // Samplers: a seed reproduces the reply with every sampler on; another seed differs.
  const sampled = (seed) => client.chat.completions.create(chatArgs('Hello', {
    temperature: 1, seed, max_tokens: 24, top_p: 0.95, min_p: 0.02, presence_penalty: 0.5, frequency_penalty: 0.5, repetition_penalty: 1.1,
    logit_bias: { 68: 2 },
  })).then((c) => c.choices[0].message.content);
  const [s1, s2, s3] = [await sampled(42), await sampled(42), await sampled(43)];
  check('min_p, penalties, logit_bias and seed: the same seed gives the same reply, another seed another', s1 === s2 && s1 !== s3, JSON.stringify([s1, s2, s3]));
  const biased = await client.chat.completions.create(chatArgs('Hello', { logit_bias: { 68: 100 } }));  // token 68 is the byte 'A'
  check('logit_bias +100 at temperature 0: every token is that one', biased.choices[0].message.content === 'A'.repeat(12), biased.choices[0].message.content);
  const minP = await client.chat.completions.create(chatArgs('Hello', { temperature: 1, min_p: 1, seed: 9 }));
  check('min_p 1 at temperature 1: the greedy reply', minP.choices[0].message.content === reply, minP.choices[0].message.content);

  // Embeddings: the client asks for base64 unless told otherwise and decodes it; both give the same unit vectors.
  const texts = ['Once upon a time', 'The cat sat on the mat.'];
  const emb = await client.embeddings.create({ model, input: texts });
  const floats = await client.embeddings.create({ model, input: texts, encoding_format: 'float' });
  const unit = (v) => Math.abs(Math.hypot(...v) - 1) < 1e-5;
  const same = (a, b) => a.length === b.length && a.every((x, i) => Math.abs(x - b[i]) < 1e-6);
  check('embeddings.create: one unit vector per input (base64 as the client asks, float alike), usage counted',
        emb.object === 'list' && emb.data.length === 2 && emb.data.every((d, i) => d.index === i && d.object === 'embedding' && unit(d.embedding)) &&
        floats.data.every((d, i) => same(d.embedding, emb.data[i].embedding)) && !same(emb.data[0].embedding, emb.data[1].embedding) &&
        emb.usage.prompt_tokens > 2 && emb.usage.total_tokens === emb.usage.prompt_tokens,
        JSON.stringify(emb).slice(0, 300));
  await expectError('embeddings.create with other dimensions -> BadRequestError 400 param dimensions',
                    () => client.embeddings.create({ model, input: 'a', dimensions: 3 }), OpenAI.BadRequestError, 400, undefined, 'dimensions');

  const again = await client.chat.completions.create(chatArgs('Hello'));
  check('still serving after the errors', again.choices[0].message.content === reply);
  process.exit(failed ? 1 : 0);
})().catch((e) => {
  console.log('FAIL unexpected error: ' + (e.stack || e));
  process.exit(1);
});

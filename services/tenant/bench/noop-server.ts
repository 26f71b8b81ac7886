// The ceiling for bench:writes: a fastify server whose PUT handler does nothing,
// run as its own process, so the benchmark can report how close the real
// tenant comes to what HTTP alone allows on the same machine, in the same run.
import Fastify from 'fastify';

const app = Fastify({ logger: false });
app.put('/databases/:db/docs', async (request, reply) => {
  reply.code(201);
  return { Id: (request.query as { id: string }).id };
});
const address = await app.listen({ port: 0, host: '127.0.0.1' });
process.send!({ address });

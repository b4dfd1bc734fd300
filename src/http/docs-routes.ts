import { readFileSync } from "node:fs";
import swagger from "@fastify/swagger";
import swaggerUi from "@fastify/swagger-ui";
import type { FastifyInstance } from "fastify";
import { parse } from "yaml";
import { CONTRACT_PATH } from "./contract.ts";

/**
 * The contract as published: GET /v0/openapi.yaml (the file as written) and /v0/openapi.json,
 * and an interactive API reference (Swagger UI) at /docs. The UI's scripts and styles are served
 * from node_modules (@fastify/swagger-ui ships them), so the page works offline. None of these
 * routes needs a key; they are not operations of the contract.
 */
export async function docsRoutes(app: FastifyInstance): Promise<void> {
  const yamlText = readFileSync(CONTRACT_PATH, "utf8");
  const document = parse(yamlText);
  const jsonText = JSON.stringify(document);

  app.get("/v0/openapi.yaml", (_request, reply) => reply.type("application/yaml; charset=utf-8").send(yamlText));
  app.get("/v0/openapi.json", (_request, reply) => reply.type("application/json; charset=utf-8").send(jsonText));

  await app.register(swagger, { mode: "static", specification: { document } });
  await app.register(swaggerUi, {
    routePrefix: "/docs",
    theme: { title: "Audience Service API reference" },
    uiConfig: { deepLinking: true },
    // "Try it out" sends requests to the server that served this page, whatever its port.
    transformSpecification: (spec, request) => ({
      ...spec,
      servers: [{ url: `${request.protocol}://${request.host}`, description: "This server" }],
    }),
  });
}

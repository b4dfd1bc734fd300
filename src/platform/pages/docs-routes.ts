import { readFileSync } from "node:fs";
import swagger from "@fastify/swagger";
import swaggerUi from "@fastify/swagger-ui";
import type { FastifyInstance } from "fastify";
import { parse } from "yaml";
import { CONTRACT_PATH } from "../../contract/contract.ts";
import { PAGE_HEADERS } from "./page-headers.ts";

export interface DocsOptions {
  /** Where clients reach the API (PUBLIC_URL); absent: this server, as a relative URL. */
  publicUrl?: string | undefined;
}

/**
 * The contract as published: GET /v0/openapi.yaml (the file as written) and /v0/openapi.json,
 * and an interactive API reference (Swagger UI) at /docs. The UI's scripts and styles are served
 * from node_modules (@fastify/swagger-ui ships them), so the page works offline. None of these
 * routes needs a key; they are not operations of the contract.
 */
export async function docsRoutes(app: FastifyInstance, { publicUrl }: DocsOptions): Promise<void> {
  const yamlText = readFileSync(CONTRACT_PATH, "utf8");
  const document = parse(yamlText);
  const jsonText = JSON.stringify(document);
  // "Try it out" sends requests to the configured public address, or to the server that served
  // the page ("/" resolves against the page's own address). Never to the request's Host header,
  // which a client chooses.
  const servers = [
    publicUrl ? { url: publicUrl, description: "This service" } : { url: "/", description: "This server" },
  ];

  // Registered in this plugin, so it covers exactly the routes below, static files included; the
  // UI's own content security policy allows this server's files only.
  app.addHook("onSend", async (_request, reply) => {
    reply.headers(PAGE_HEADERS);
  });
  app.get("/v0/openapi.yaml", (_request, reply) => reply.type("application/yaml; charset=utf-8").send(yamlText));
  app.get("/v0/openapi.json", (_request, reply) => reply.type("application/json; charset=utf-8").send(jsonText));

  await app.register(swagger, { mode: "static", specification: { document } });
  await app.register(swaggerUi, {
    routePrefix: "/docs",
    theme: { title: "Audience Service API reference" },
    uiConfig: { deepLinking: true },
    // The plugin's policy, with its own inline scripts hashed; but no framing at all, and no
    // upgrade-insecure-requests (which would break the page served over plain HTTP on localhost).
    staticCSP: true,
    transformStaticCSP: (header) =>
      header.replace("frame-ancestors 'self'", "frame-ancestors 'none'").replace(/ ?upgrade-insecure-requests;/, ""),
    transformSpecification: (spec) => ({ ...spec, servers }),
  });
}

import { existsSync } from "node:fs";
import { join } from "node:path";
import fastifyStatic from "@fastify/static";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { routeNotFound } from "../http/problem.ts";
import { PAGE_HEADERS } from "./page-headers.ts";

/**
 * The console's policy: scripts, styles and calls of this server only (the console is built
 * without inline scripts or styles), images of its own or inline data, no framing, no plugins.
 */
export const CONSOLE_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "font-src 'self'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join("; ");

export interface ConsoleOptions {
  /** The console's build (scripts/build-console.ts writes dist/console). */
  dir: string;
}

/**
 * The console at /console: its built files, and its index page for every other path below it
 * (the console routes in the browser, so /console/audiences/aud_… is the same page). Bundles
 * carry their content hash in their names and are kept by browsers; the page is revalidated.
 * Without a build (running from source without `npm run build`) /console says how to make one.
 */
export async function consoleRoutes(app: FastifyInstance, { dir }: ConsoleOptions): Promise<void> {
  app.addHook("onSend", async (_request, reply) => {
    reply.headers({ ...PAGE_HEADERS, "content-security-policy": CONSOLE_CSP });
  });
  app.get("/console", (_request, reply) => reply.redirect("/console/", 301));
  if (!existsSync(join(dir, "index.html"))) {
    app.get("/console/*", (_request, reply) =>
      reply
        .code(503)
        .type("text/plain; charset=utf-8")
        .send("The console is not built: run `npm run build` (`npm start` builds it before starting).\n"),
    );
    return;
  }
  await app.register(fastifyStatic, {
    root: dir,
    prefix: "/console/",
    wildcard: false,
    index: false,
    serveDotFiles: false,
    setHeaders: (reply, path) => {
      const hashed = path.startsWith(join(dir, "assets"));
      reply.header("cache-control", hashed ? "public, max-age=31536000, immutable" : "no-cache");
    },
  });
  const page = (_request: FastifyRequest, reply: FastifyReply) =>
    reply.header("cache-control", "no-cache").sendFile("index.html");
  app.get("/console/", page);
  app.get("/console/*", page);
  // A bundle this build does not have (a page of an older build asking for its files) is missing, not the page.
  app.get("/console/assets/*", routeNotFound);
}

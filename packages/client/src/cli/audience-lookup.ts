import { ApiError } from "../index.js";
import { usageError } from "./cli-errors.js";
import type { Service } from "./service.js";

/** What --audience / --audience-id asked for. */
export interface AudienceOption {
  name?: string | undefined;
  id?: string | undefined;
}

export function checkAudienceOption({ name, id }: AudienceOption): void {
  if (name !== undefined && id !== undefined) throw usageError("give --audience or --audience-id, not both");
  if (name !== undefined && name.trim() === "") throw usageError("--audience needs a name");
}

/**
 * The unarchived audience with this name, compared as the server compares names (trimmed,
 * case-insensitive, blind to Unicode composition); listAudiences' search narrows the list to
 * names that contain the term, so the exact match is picked here.
 */
export async function findAudience({ api, config }: Service, name: string): Promise<string | undefined> {
  const wanted = name.trim();
  const { results } = await api.GET("/v0/workspaces/{workspaceId}/audiences", {
    params: { path: { workspaceId: config.workspaceId }, query: { search: wanted } },
  });
  return results.find((audience) => nameKey(audience.name) === nameKey(wanted))?.id;
}

/** The audience to import into: by id as given, or by name, created when no audience has it yet. */
export async function findOrCreateAudience(
  service: Service,
  option: AudienceOption,
  say: (line: string) => void,
): Promise<string | undefined> {
  if (option.id !== undefined || option.name === undefined) return option.id;
  const name = option.name.trim();
  const existing = await findAudience(service, name);
  if (existing) return existing;
  try {
    const { id } = await service.api.POST("/v0/workspaces/{workspaceId}/audiences", {
      params: { path: { workspaceId: service.config.workspaceId } },
      body: { name },
    });
    say(`Created the audience "${name}" (${id}).`);
    return id;
  } catch (error) {
    // Another client created it between the look-up and the create: use theirs.
    if (!(error instanceof ApiError && error.code === "audience_name_taken")) throw error;
    const raced = await findAudience(service, name);
    if (!raced) throw error;
    return raced;
  }
}

/** The audience to export: by id as given, or the unarchived audience with this name. */
export async function requireAudience(service: Service, option: AudienceOption): Promise<string | undefined> {
  if (option.id !== undefined || option.name === undefined) return option.id;
  const id = await findAudience(service, option.name);
  if (!id) {
    throw usageError(
      `no unarchived audience is named "${option.name.trim()}" (an archived one can be exported with --audience-id)`,
    );
  }
  return id;
}

/**
 * The key the server compares audience names by (case-insensitive, blind to Unicode composition):
 * src/domain/names.ts in the service's repository, copied rather than imported because this
 * package ships without the server; test/cli/server-rules.test.ts holds the two in step.
 */
export function nameKey(name: string): string {
  return name.normalize("NFC").toLowerCase();
}

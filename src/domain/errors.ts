import type { components } from "../../generated/api.d.ts";

/** Every error code the service can answer with; the contract's Problem.code enum is the source. */
export type ProblemCode = components["schemas"]["Problem"]["code"];

export interface FieldError {
  pointer: string;
  message: string;
}

/** Members of a problem document beyond the standard ones, as the contract's Problem names them. */
export type ProblemExtensions = Pick<
  components["schemas"]["Problem"],
  "audienceIds" | "count" | "memberIds" | "oldestAvailable"
>;

/** An expected failure: becomes an application/problem+json response with this status and code. */
export class AppError extends Error {
  constructor(
    readonly status: number,
    readonly code: ProblemCode,
    readonly title: string,
    readonly detail: string,
    readonly errors?: FieldError[],
    readonly extensions?: ProblemExtensions,
  ) {
    super(detail);
    this.name = "AppError";
  }
}

export class BadRequestError extends AppError {
  constructor(
    code: Extract<
      ProblemCode,
      | "invalid_request"
      | "malformed_json"
      | "invalid_cursor"
      | "too_many_items"
      | "invalid_filter"
      | "filter_cycle"
      | "filter_too_costly"
      | "invalid_field_value"
      | "webhook_url_not_allowed"
      | "invalid_csv"
      | "invalid_activity"
    >,
    detail: string,
    errors?: FieldError[],
  ) {
    const titles = {
      invalid_request: "Invalid request",
      malformed_json: "Malformed JSON",
      invalid_cursor: "Invalid cursor",
      too_many_items: "Too many items",
      invalid_filter: "Invalid filter",
      filter_cycle: "Filter cycle",
      filter_too_costly: "Filter too costly",
      invalid_field_value: "Invalid field value",
      webhook_url_not_allowed: "Webhook URL not allowed",
      invalid_csv: "Invalid CSV file",
      invalid_activity: "Invalid activity",
    } as const;
    super(400, code, titles[code], detail, errors);
  }
}

/** An instant older than the membership record keeps (its horizon, or its start). */
export class HistoryUnavailableError extends AppError {
  constructor(parameter: "asOf" | "from" | "to", oldestAvailable: Date) {
    const oldest = oldestAvailable.toISOString();
    super(
      400,
      "history_unavailable",
      "History unavailable",
      `${parameter} is older than the membership record keeps; the oldest instant it answers for is ${oldest}.`,
      [{ pointer: `/query/${parameter}`, message: `must not be earlier than ${oldest}` }],
      { oldestAvailable: oldest },
    );
  }
}

export class UnauthorizedError extends AppError {
  constructor(detail = "Send a valid API key as: Authorization: Bearer <key>") {
    super(401, "unauthorized", "Unauthorized", detail);
  }
}

export class ForbiddenError extends AppError {
  constructor(detail = "This API key cannot act on this workspace.") {
    super(403, "forbidden", "Forbidden", detail);
  }
}

export class NotFoundError extends AppError {
  constructor(
    code: Extract<
      ProblemCode,
      | "audience_not_found"
      | "member_not_found"
      | "workspace_not_found"
      | "api_key_not_found"
      | "route_not_found"
      | "webhook_not_found"
      | "delivery_not_found"
      | "import_not_found"
      | "field_not_found"
    >,
    detail: string,
  ) {
    const titles = {
      audience_not_found: "Audience not found",
      member_not_found: "Member not found",
      workspace_not_found: "Workspace not found",
      api_key_not_found: "API key not found",
      route_not_found: "Route not found",
      webhook_not_found: "Webhook not found",
      delivery_not_found: "Delivery not found",
      import_not_found: "Import not found",
      field_not_found: "Field not found",
    } as const;
    super(404, code, titles[code], detail);
  }
}

export class ConflictError extends AppError {
  constructor(
    code: Extract<
      ProblemCode,
      | "audience_name_taken"
      | "audience_archived"
      | "member_identity_conflict"
      | "idempotency_key_in_progress"
      | "webhook_disabled"
      | "import_finished"
      | "too_many_imports"
      | "field_values_invalid"
      | "field_in_use"
      | "audience_in_use"
      | "rule_limit_exceeded"
    >,
    detail: string,
    extensions?: ProblemExtensions,
  ) {
    const titles = {
      audience_name_taken: "Audience name taken",
      audience_archived: "Audience archived",
      member_identity_conflict: "Member identity conflict",
      idempotency_key_in_progress: "Idempotency key in progress",
      webhook_disabled: "Webhook disabled",
      import_finished: "Import finished",
      too_many_imports: "Too many imports",
      field_values_invalid: "Field values invalid",
      field_in_use: "Field in use",
      audience_in_use: "Audience in use",
      rule_limit_exceeded: "Rule limit exceeded",
    } as const;
    super(409, code, titles[code], detail, undefined, extensions);
  }
}

export const audienceNotFound = (id: string) =>
  new NotFoundError("audience_not_found", `No audience ${id} in this workspace.`);

export const memberNotFound = (id: string) =>
  new NotFoundError("member_not_found", `No member ${JSON.stringify(id)} in this workspace.`);

/** An audience as a person knows it (its name), with the id a program knows it by: `"Name" (id)`. */
export const audienceLabel = (id: string, name?: string) => (name === undefined ? id : `"${name}" (${id})`);

/** 409 audience_archived; keeps the audience's name for the callers that word their own detail. */
export class AudienceArchivedError extends ConflictError {
  constructor(
    readonly audienceId: string,
    readonly audienceName?: string,
  ) {
    super(
      "audience_archived",
      `Audience ${audienceLabel(audienceId, audienceName)} is archived and cannot be changed; restore it first.`,
    );
  }
}

/** `name` when the refusing code read the audience: a person knows it by its name, a program by its id. */
export const audienceArchived = (id: string, name?: string) => new AudienceArchivedError(id, name);

export const audienceNameTaken = (name: string) =>
  new ConflictError("audience_name_taken", `An audience named "${name}" already exists in this workspace.`);

export const unsupportedMediaType = (detail = "Send the body as application/json.") =>
  new AppError(415, "unsupported_media_type", "Unsupported media type", detail);

export const payloadTooLarge = (detail = "The request body is larger than the server accepts.") =>
  new AppError(413, "payload_too_large", "Payload too large", detail);

/** An infrastructure fault (the database down, slow or saturated): retry after retryAfterSeconds. */
export class ServiceUnavailableError extends AppError {
  constructor(
    detail: string,
    readonly retryAfterSeconds = 2,
  ) {
    super(503, "service_unavailable", "Service unavailable", detail);
  }
}

export const serviceUnavailable = (detail: string, retryAfterSeconds?: number) =>
  new ServiceUnavailableError(detail, retryAfterSeconds);

/** The API key already runs as many exports as one key may at once: retry after retryAfterSeconds. */
export class TooManyExportsError extends AppError {
  constructor(
    detail: string,
    readonly retryAfterSeconds: number,
  ) {
    super(429, "too_many_exports", "Too many exports", detail);
  }
}

/** One API key runs as many heavy operations at once as it may (HEAVY_CONCURRENCY_PER_KEY). */
export class TooManyHeavyRequestsError extends AppError {
  constructor(
    detail: string,
    readonly retryAfterSeconds: number,
  ) {
    super(429, "too_many_heavy_requests", "Too many heavy requests", detail);
  }
}

export const cursorExpired = () =>
  new AppError(
    410,
    "cursor_expired",
    "Cursor expired",
    "The events after this cursor are no longer kept; start again from events/latest.",
  );

export const webhookNotFound = (id: string) =>
  new NotFoundError("webhook_not_found", `No webhook ${id} in this workspace.`);

export const importNotFound = (id: string) =>
  new NotFoundError("import_not_found", `No import ${id} in this workspace.`);

export const invalidCsv = (detail: string) => new BadRequestError("invalid_csv", detail);

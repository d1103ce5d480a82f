/** Every route group starts from createRouter(): an OpenAPIHono whose validation errors are problems. */
import { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../env.js";
import { validationHook } from "../http-errors.js";

export const createRouter = () => new OpenAPIHono<AppEnv>({ defaultHook: validationHook });

/** Security requirement of protected routes: the bearer scheme, enforced only when auth is on. */
export const BEARER_SECURITY: Record<string, string[]>[] = [{ bearerAuth: [] }];

/** Every route group starts from createRouter(): an OpenAPIHono whose validation errors are problems. */
import { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../env.js";
import { validationHook } from "../http-errors.js";

export const createRouter = () => new OpenAPIHono<AppEnv>({ defaultHook: validationHook });

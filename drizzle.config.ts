// Tool config: drizzle-kit expects a default export.
import { defineConfig } from "drizzle-kit";

export default defineConfig({
  dialect: "sqlite",
  schema: "./src/metadata/schema.ts",
  out: "./drizzle",
});

import { checkout } from "./checkout";

export function run(): number {
  return checkout({ items: [60, 70] });
}

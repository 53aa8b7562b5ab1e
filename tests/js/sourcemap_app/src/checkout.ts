// The fixture of tests/dashboard/test_source_maps.py: an error thrown three calls deep,
// so that the mapped frames can be checked line by line.
export interface Cart {
  items: number[];
}

function priceOf(cart: Cart): number {
  const total = cart.items.reduce((sum, item) => sum + item, 0);
  if (total > 100) {
    throw new Error(`cart total ${total} is over the limit`);
  }
  return total;
}

export function checkout(cart: Cart): number {
  const price = priceOf(cart);
  return price * 2;
}

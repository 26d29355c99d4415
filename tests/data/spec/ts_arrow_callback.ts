const handlers = items.map((item) => {
  // Format the item as "name: price".‸
});

/** The Webhooks screen (to come). */
export function WebhooksScreen() {
  return <h1>Webhooks</h1>;
}

/** The value of one sample of a server's GET /metrics, by its name and labels as exposed; 0 when absent. */
export async function metricSample(baseUrl: string, series: string): Promise<number> {
  const text = await (await fetch(`${baseUrl}/metrics`)).text();
  const line = text.split("\n").find((l) => l.startsWith(`${series} `));
  return Number(line?.split(" ")[1] ?? 0);
}

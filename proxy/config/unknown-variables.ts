// An OBV_* variable the proxy does not read is almost always a typo (OBV_CLIENTID for OBV_CLIENT_ID)
// whose real name is then "missing": name it as unknown, with the closest real name.

/** Edit distance (insertions, deletions, substitutions) between two short strings. */
function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, index) => index);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      current[j] = Math.min(
        (previous[j] ?? 0) + 1,
        (current[j - 1] ?? 0) + 1,
        (previous[j - 1] ?? 0) + (a[i - 1] === b[j - 1] ? 0 : 1),
      );
    }
    previous = current;
  }
  return previous[b.length] ?? 0;
}

/** The known name closest to `name`, when it is close enough to be the one meant. */
export function closestName(name: string, known: readonly string[]): string | undefined {
  const bare = (value: string) => value.replace(/_/g, '');
  let best: { name: string; distance: number } | undefined;
  for (const candidate of known) {
    // Underscores dropped or added count for nothing: OBV_CLIENTID is OBV_CLIENT_ID.
    const distance = bare(candidate) === bare(name) ? 0 : editDistance(name, candidate);
    if (!best || distance < best.distance) best = { name: candidate, distance };
  }
  return best && best.distance <= Math.max(2, Math.floor(name.length / 5)) ? best.name : undefined;
}

/** One issue per OBV_* variable in `env` that is not in `known`, with a suggestion when one is close. */
export function unknownVariables(
  env: NodeJS.ProcessEnv,
  known: readonly string[],
): { setting: string; message: string }[] {
  return Object.keys(env)
    .filter((name) => name.startsWith('OBV_') && !known.includes(name))
    .sort()
    .map((name) => {
      const suggestion = closestName(name, known);
      return {
        setting: name,
        message: `is not a variable obv-link reads${suggestion ? ` (did you mean ${suggestion}?)` : ''}`,
      };
    });
}

// The ~1 KB package document the mirror benchmarks write (mirror-choice.ts and mirror.ts measure
// the same shape, so their figures compare).
const filler = 'lorem ipsum dolor sit amet consectetur adipiscing elit sed do eiusmod tempor '.repeat(12);

export const benchDocument = (i: number) => ({
  Name: `Package ${i}`,
  Version: `1.${i % 50}.${i % 7}`,
  Downloads: i * 7,
  Description: filler.slice(0, 840 + (i % 60)),
  '@metadata': { '@collection': 'Packages' },
});

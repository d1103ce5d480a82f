/** Small real media for browser tests: a 1×1 PNG, a one-page PDF, a WAV tone to seek in, a recorded WebM. */
export const PNG_1x1 = Buffer.from(
  "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==",
  "base64",
);

/** A one-page PDF saying "Hello PDF", with a correct cross-reference table. */
export function tinyPdf(): string {
  const stream = "BT /F1 24 Tf 20 100 Td (Hello PDF) Tj ET";
  const objects = [
    "<< /Type /Catalog /Pages 2 0 R >>",
    "<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
    "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 200 200] /Contents 4 0 R /Resources << /Font << /F1 5 0 R >> >> >>",
    `<< /Length ${stream.length} >>\nstream\n${stream}\nendstream`,
    "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
  ];
  let pdf = "%PDF-1.4\n";
  const offsets = objects.map((object, i) => {
    const offset = pdf.length;
    pdf += `${i + 1} 0 obj\n${object}\nendobj\n`;
    return offset;
  });
  const xref = pdf.length;
  pdf += `xref\n0 ${objects.length + 1}\n0000000000 65535 f \n${offsets.map((o) => `${String(o).padStart(10, "0")} 00000 n \n`).join("")}`;
  return `${pdf}trailer\n<< /Size ${objects.length + 1} /Root 1 0 R >>\nstartxref\n${xref}\n%%EOF\n`;
}

/** `seconds` of a 440 Hz tone as 8 kHz 16-bit mono PCM WAV: media any browser plays, big enough to seek in. */
export function toneWav(seconds: number): Uint8Array {
  const rate = 8000;
  const samples = rate * seconds;
  const wav = Buffer.alloc(44 + samples * 2);
  wav.write("RIFF", 0);
  wav.writeUInt32LE(36 + samples * 2, 4);
  wav.write("WAVEfmt ", 8);
  wav.writeUInt32LE(16, 16); // fmt chunk size
  wav.writeUInt16LE(1, 20); // PCM
  wav.writeUInt16LE(1, 22); // mono
  wav.writeUInt32LE(rate, 24);
  wav.writeUInt32LE(rate * 2, 28); // bytes per second
  wav.writeUInt16LE(2, 32); // block align
  wav.writeUInt16LE(16, 34); // bits per sample
  wav.write("data", 36);
  wav.writeUInt32LE(samples * 2, 40);
  for (let i = 0; i < samples; i++)
    wav.writeInt16LE(Math.round(8000 * Math.sin((2 * Math.PI * 440 * i) / rate)), 44 + i * 2);
  return wav;
}

/**
 * Records `frames` frames of a changing 160×120 canvas as WebM, in the page (no video fixture or
 * encoder here): pass it to `page.evaluate`. 25 frames a second.
 */
export async function recordCanvasWebm(frames: number): Promise<number[]> {
  const canvas = Object.assign(document.createElement("canvas"), { width: 160, height: 120 });
  const ctx = canvas.getContext("2d") as CanvasRenderingContext2D;
  const recorder = new MediaRecorder(canvas.captureStream(25), { mimeType: "video/webm" });
  const chunks: Blob[] = [];
  recorder.ondataavailable = (e) => chunks.push(e.data);
  const stopped = new Promise((resolve) => (recorder.onstop = resolve));
  recorder.start(100);
  for (let frame = 0; frame < frames; frame++) {
    ctx.fillStyle = `hsl(${(frame * 360) / frames}, 80%, 50%)`;
    ctx.fillRect(0, 0, 160, 120);
    await new Promise((r) => setTimeout(r, 40));
  }
  recorder.stop();
  await stopped;
  return Array.from(new Uint8Array(await new Blob(chunks).arrayBuffer()));
}

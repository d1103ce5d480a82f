/**
 * Images whose thumbhash both runtimes compute (issue 38): Node and Bun with sharp, Workers through
 * the Images binding. Each carries the hash Node computes for it (test/images/placeholder-parity.test.ts
 * checks these on Node; test/workers/thumbhash.test.ts checks the Worker gets the same). Made with
 * sharp from raw gradients (red across, green down, blue falling along the diagonal).
 */

/** 20×15 RGBA PNG (sharp, compressionLevel 9): the right half at alpha 64. Node: 100×75 decoded. */
export const GRADIENT_PNG = {
  width: 20,
  height: 15,
  base64:
    "iVBORw0KGgoAAAANSUhEUgAAABQAAAAPCAYAAADkmO9VAAAACXBIWXMAAAPoAAAD6AG1e1JrAAADdElEQVR42g3MIaurDAAGYOMtcsFyguEU4ZgWtY0XhIFhwbAkM62pzSIYBMFiU5vJYVowLAgDy5rGJQ9YTjCcIlwsX3y/PT/gEQSBFIX/KAv/qAq/1IQfGsI3LeFFRxjpCk+GwoOpcEcp3FALV7RChV4oMAoZJiHBIkTYhAAUPAiC9B9F6R9l6Zeq9ENN+qYhvWhJIx3pSVd6MJTuTKUbSumKWqrQSgV6KcMoJZikCIsUYJM8ULq8Q+UfReWXsvJDVfmmprxoKCMt5UlHedBV7gyVG1PlilKpUCsFWiVDryQYlQiTEmBRPGzKBVTO71D/paj/UNa/qeovavpIQ3/S0h909Dtd/cZQvzLVK5R6gVrP0OoJej3CqAeYdA+LfsGmn0H99A7NH4rmN2XzRdUcqZlPGuaDlnmnY97omleGZsXULFCaGWozQWtG6M0Ao+lhMi9YzDM28wSax3dof1O0X5Ttkar9pGY/aNh3WvaNjn2la1cM7YKpnaG0E9R2hNYO0NseRvuCyT5jsU/Y7CNoH96h/6Loj5T9J1X/Qc2/0/BvtPwrHb+i6xcM/Yypn6D0I9R+gNb30PsXjP4Zk3/C4h+x+QfQ37/DeKQYPynHD6rxnVp8oxFfacUVnbigG2cM44RpHKGMA9Sxhza+oI/PGOMTpviIJT5gi/dgrL3D/Ekxf1DO71TzG7X8SiOvaOUFnTyjmycM84hpHqDMPdT5BW1+Rp+fMOZHTPkBS77HlmtgvnuHzYNic6fc3Kg2V2pNRaMpaDUZnSah20QMm4Bp46FsLqibM9rmhL45YmwOmJo9lkbD1uzA5usddneK3Y1yd6XaVdS6gkaX0eoSOl1EtwsYdh7T7oKyO6PuTmi7I/rugLHbY+o0LN0OW/cFdp/vcLhRHK6Uh4rqUFAbMhpDQmuI6AwB3cFjOFyYDmeUwwn1cEQ7HNAPe4yDhmnYYRm+sA2f4PDxDucrxbmiPBdU54zanNCYI1pzQGf26M4XhvOZ6XxCOR9Rzwe08x79rGGcd5jmLyzzJ7b5A5z/vsO1orgWlNeM6ppQWyMaa0Br9eisF7rrmeF6YroeUa4H1Ose7aqhX3cY1y9M6yeW9QPb+hdc/7xDFhSZUWZClRE1BjTo0eKFDs90eWLII1MeUHKPmhpa7tDzCyM/MfEDC/9i4x+QAv4HEIF7UXjogu0AAAAASUVORK5CYII=",
  nodeThumbhash: "nraFRJJJZIZQiIh4FwWFUq/3V4iId4eIBw==",
};

/** 30×54 RGB JPEG (sharp, quality 70), portrait. Node: 56×100 decoded. */
export const GRADIENT_JPEG = {
  width: 30,
  height: 54,
  base64:
    "/9j/2wBDAAoHBwgHBgoICAgLCgoLDhgQDg0NDh0VFhEYIx8lJCIfIiEmKzcvJik0KSEiMEExNDk7Pj4+JS5ESUM8SDc9Pjv/2wBDAQoLCw4NDhwQEBw7KCIoOzs7Ozs7Ozs7Ozs7Ozs7Ozs7Ozs7Ozs7Ozs7Ozs7Ozs7Ozs7Ozs7Ozs7Ozs7Ozs7Ozv/wAARCAA2AB4DASIAAhEBAxEB/8QAGQABAAMBAQAAAAAAAAAAAAAABAABAgUH/8QAGhABAQEBAQEBAAAAAAAAAAAAAwBhITEBEf/EABgBAQEBAQEAAAAAAAAAAAAAAAYHAQID/8QAHBEAAgIDAQEAAAAAAAAAAAAAAAQBAwIhMQUR/9oADAMBAAIRAxEAPwDz0RyeI5WIZOEKgtNG+fdwoRycQ88tCGTiHnkYaaHaF2jiCOThHLQhk4RyxpolqF3ChHJxDzy0I5OIeRhlrY7Ru0cMRyeI5WIZPEMuWmiXIXcMiOTiHnloQycQ88jLLQ6Ru0cMS+TxL5ylL3aykmfnzOhwl8nEXz8pSMs5SO0Jn4f/2Q==",
  nodeThumbhash: "3wcGfBqAN3h4d4eHeIiCcAj4dw==",
};

export const bytesOf = (base64: string) => Uint8Array.from(atob(base64), (c) => c.charCodeAt(0));

// The SDK's webhook verification (which the console never calls) names Node's Buffer in its
// signature; in the browser's types it is the byte array it extends.
type Buffer = Uint8Array;

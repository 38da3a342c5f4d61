export { default as Sigma } from "sigma";
export { EdgeLineProgram, EdgeRectangleProgram, NodeCircleProgram, NodePointProgram } from "sigma/rendering";
export { default as Graph } from "graphology";
